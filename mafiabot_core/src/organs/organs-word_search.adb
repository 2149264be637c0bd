with Ada.Unchecked_Deallocation;
with Interfaces;

package body Organs.Word_Search is

   use type Interfaces.Unsigned_32;

   Index_Cost_Per_Byte : constant := 375;
   Direct_Cost_Per_Position : constant := 19;
   --  The relative costs of indexing one byte of the texts and of looking
   --  for a word at one position of a text where its first byte does not
   --  match, as measured (bench/README.md, "The word search's cost model")

   Index_Cost_In_Positions : constant :=
     Index_Cost_Per_Byte / Direct_Cost_Per_Position;
   --  Indexing a byte of the texts costs as much as this many positions
   --  searched directly

   pragma Compile_Time_Error
     (Index_Cost_In_Positions < 1,
      "a direct search would never be tried");

   Direct_Input_Limit : constant := 128;
   --  The longest text C3's rules are looked for in directly: at most its
   --  square of comparisons, whatever the rule

   Word_Bytes : constant array (Character) of Boolean :=
     [for C in Character => Is_Word_Byte (C)];
   --  Is_Word_Byte as one load a byte, for the loops over a whole input

   function First_Of (Texts : String; Ends : Text_Ends; K : Positive)
     return Positive is
     (if K = Ends'First then Texts'First else Ends (K - 1) + 1)
   with Pre => K in Ends'Range;

   ---------------------------------------------------------------------
   --  Directly: each word of the input against each position of a text

   --  Whether Word stands in Text, Text's bytes folded and Word's compared
   --  as they are: the first byte at each position, then the rest where it
   --  matched.  At most Word'Length comparisons at each position of Text.
   function Occurs_Folded_Directly (Word, Text : String) return Boolean is
     (for some Start in Text'First .. Text'Last - Word'Length + 1 =>
        Folded (Text (Start)) = Word (Word'First)
        and then (for all K in Word'First + 1 .. Word'Last =>
                    Folded (Text (Start + (K - Word'First))) = Word (K)))
   with Pre => Word'Length in 1 .. Text'Length;

   --  Whether some word of Min_Word_Bytes or more of Left occurs in Right,
   --  both compared with ASCII folding; Spent counts the work (a byte of
   --  Left read, a position of Right tried), and the search gives up, with
   --  Done false, once Spent is past Budget
   procedure Share_Word
     (Left, Right : String; Budget : Natural; Spent : in out Natural;
      Shared, Done : out Boolean)
   is
      Start : Natural := 0;
   begin
      Shared := False;
      Done := False;
      for Index in Left'First .. Left'Last + 1 loop
         Spent := Spent + 1;
         if Spent > Budget then
            return;
         end if;
         if Index <= Left'Last and then Word_Bytes (Left (Index)) then
            if Start = 0 then
               Start := Index;
            end if;
         elsif Start /= 0 then
            if Index - Start >= Min_Word_Bytes
              and then Index - Start <= Right'Length
            then
               Spent := Spent + Right'Length;
               if Spent > Budget then
                  return;
               end if;
               if Occurs_Folded_Directly
                    (Folded (Left (Start .. Index - 1)), Right)
               then
                  Shared := True;
                  Done := True;
                  return;
               end if;
            end if;
            Start := 0;
         end if;
      end loop;
      Done := True;
   end Share_Word;

   --  Latest_Sharing, directly, with as much work as Budget allows; Done
   --  false if that was not enough
   procedure Latest_Sharing_Directly
     (Texts : String; Ends : Text_Ends; Input : String; Budget : Natural;
      Latest : out Natural; Done : out Boolean)
   is
      Spent  : Natural := 0;
      Shared : Boolean;
   begin
      Latest := 0;
      for K in reverse Ends'Range loop
         Share_Word (Input, Texts (First_Of (Texts, Ends, K) .. Ends (K)),
                     Budget, Spent, Shared, Done);
         if not Done or else Shared then
            Latest := (if Shared then K else 0);
            return;
         end if;
      end loop;
      Done := True;
   end Latest_Sharing_Directly;

   ---------------------------------------------------------------------
   --  Through a suffix automaton of the texts
   --
   --  The automaton reads the folded texts one after the other, each ended
   --  by a NUL.  It accepts exactly the substrings of that sequence, and a
   --  word (no NUL in it, for NUL is no word byte) is a substring of it
   --  exactly when it is one of some text.  Each state carries the set of
   --  texts its substrings end in (Found): a prefix's own state gets its
   --  text, and every state gets the texts of the states whose suffix link
   --  leads to it, so a word walked to a state occurs in exactly the texts
   --  of its set.  A transition lives in an open-addressing table keyed by
   --  (state, byte), its target beside its key, and is listed with its
   --  state's others for the one step that copies them (a clone); the
   --  automaton of n bytes has at most 2n states and 3n edges.

   type Text_Set is new Interfaces.Unsigned_32;

   function Only (K : Positive) return Text_Set is
     (Text_Set (Interfaces.Shift_Left (Interfaces.Unsigned_32'(1), K - 1)))
   with Pre => K <= Max_Texts;

   type State is record
      Length : Natural := 0;
      --  Of the longest substring the state stands for
      Link   : Integer := -1;
      --  Suffix link; -1 for the initial state
      Edges  : Natural := 0;
      --  The first of its edges, 0 for none
      Found  : Text_Set := 0;
   end record;

   subtype Edge_Key is Interfaces.Unsigned_32;
   --  (state, byte) as State * 256 + byte + 1; 0 marks a vacant slot.
   --  Max_Text_Bytes keeps every state's key below 2**32.

   type Slot is record
      Key    : Edge_Key := 0;
      Target : Natural := 0;
   end record;
   --  An edge where a walk finds it: one read per byte walked

   type Edge is record
      Place : Natural;
      --  Its slot
      Next  : Natural;
      --  The next edge of the same state, 0 for none
   end record;
   --  The edges of a state in a list, for cloning a state

   type State_Array is array (Natural range <>) of State;
   type Edge_Array is array (Positive range <>) of Edge;
   type Slot_Array is array (Natural range <>) of Slot;

   type Automaton (Last_State, Last_Edge, Last_Slot : Natural) is record
      States : State_Array (0 .. Last_State);
      Edges  : Edge_Array (1 .. Last_Edge);
      Slots  : Slot_Array (0 .. Last_Slot);
      Shift  : Natural range 0 .. 31;
      --  Last_Slot + 1 = 2 ** (32 - Shift)
      Used_States : Natural := 0;
      Used_Edges  : Natural := 0;
   end record;
   --  Last_Slot + 1 is a power of two at least twice Last_Edge: probe runs
   --  stay short and always end at a vacant slot

   type Automaton_Access is access Automaton;
   procedure Free is new Ada.Unchecked_Deallocation
     (Automaton, Automaton_Access);

   function Key_Of (From : Natural; Byte : Character) return Edge_Key is
     (Edge_Key (From) * 256 + Character'Pos (Byte) + 1)
   with Inline;

   function Byte_Of (Key : Edge_Key) return Character is
     (Character'Val ((Key - 1) mod 256));

   --  The slot of the edge from From on Byte, or the vacant slot where it
   --  would go (Fibonacci hashing of the key, then linear probing)
   function Place_Of (Self : Automaton; From : Natural; Byte : Character)
     return Natural
   with Inline
   is
      Key   : constant Edge_Key := Key_Of (From, Byte);
      Place : Natural :=
        Natural (Interfaces.Shift_Right (Key * Edge_Key'(16#9E37_79B1#),
                                         Self.Shift));
   begin
      while Self.Slots (Place).Key /= 0 and then Self.Slots (Place).Key /= Key
      loop
         Place := (if Place = Self.Last_Slot then 0 else Place + 1);
      end loop;
      return Place;
   end Place_Of;

   function Is_Edge (Self : Automaton; Place : Natural) return Boolean is
     (Self.Slots (Place).Key /= 0)
   with Inline;

   procedure Add_Edge
     (Self : in out Automaton; Place : Natural; From : Natural;
      Byte : Character; Target : Natural)
   with Pre => not Is_Edge (Self, Place)
     and then Self.Used_Edges < Self.Last_Edge
   is
   begin
      Self.Slots (Place) := (Key => Key_Of (From, Byte), Target => Target);
      Self.Used_Edges := Self.Used_Edges + 1;
      Self.Edges (Self.Used_Edges) :=
        (Place => Place, Next => Self.States (From).Edges);
      Self.States (From).Edges := Self.Used_Edges;
   end Add_Edge;

   function New_State
     (Self : in out Automaton; Length : Natural; Found : Text_Set)
     return Natural is
   begin
      Self.Used_States := Self.Used_States + 1;
      Self.States (Self.Used_States) :=
        (Length => Length, Link => -1, Edges => 0, Found => Found);
      return Self.Used_States;
   end New_State;

   --  The automaton of the sequence read so far, ending in state Last,
   --  extended by Byte, which belongs to the texts In_Text
   procedure Extend
     (Self : in out Automaton; Last : in out Natural; Byte : Character;
      In_Text : Text_Set)
   is
      Current : constant Natural :=
        New_State (Self, Self.States (Last).Length + 1, In_Text);
      From    : Integer := Last;
      Place   : Natural;
   begin
      loop
         Place := Place_Of (Self, From, Byte);
         exit when Is_Edge (Self, Place);
         Add_Edge (Self, Place, From, Byte, Current);
         From := Self.States (From).Link;
         exit when From = -1;
      end loop;
      if From = -1 then
         Self.States (Current).Link := 0;
      else
         declare
            Next : constant Natural := Self.Slots (Place).Target;
         begin
            if Self.States (From).Length + 1 = Self.States (Next).Length then
               Self.States (Current).Link := Next;
            else
               declare
                  Clone : constant Natural :=
                    New_State (Self, Self.States (From).Length + 1, 0);
                  Copied : Natural := Self.States (Next).Edges;
               begin
                  Self.States (Clone).Link := Self.States (Next).Link;
                  while Copied /= 0 loop
                     declare
                        Original : constant Slot :=
                          Self.Slots (Self.Edges (Copied).Place);
                        Byte_Of_Copy : constant Character :=
                          Byte_Of (Original.Key);
                     begin
                        Add_Edge (Self, Place_Of (Self, Clone, Byte_Of_Copy),
                                  Clone, Byte_Of_Copy, Original.Target);
                     end;
                     Copied := Self.Edges (Copied).Next;
                  end loop;
                  while From /= -1 loop
                     Place := Place_Of (Self, From, Byte);
                     exit when not Is_Edge (Self, Place)
                       or else Self.Slots (Place).Target /= Next;
                     Self.Slots (Place).Target := Clone;
                     From := Self.States (From).Link;
                  end loop;
                  Self.States (Next).Link := Clone;
                  Self.States (Current).Link := Clone;
               end;
            end if;
         end;
      end if;
      Last := Current;
   end Extend;

   --  Each state's texts joined into those of its suffix link, longest
   --  states first (a link always leads to a shorter state)
   procedure Gather_Texts (Self : in out Automaton) is
      Longest : Natural := 0;
   begin
      for Index in 1 .. Self.Used_States loop
         Longest := Natural'Max (Longest, Self.States (Index).Length);
      end loop;
      declare
         Count : array (0 .. Longest) of Natural := [others => 0];
         Order : array (1 .. Self.Used_States) of Natural;
      begin
         for Index in 1 .. Self.Used_States loop
            Count (Self.States (Index).Length) :=
              Count (Self.States (Index).Length) + 1;
         end loop;
         for Length in 1 .. Longest loop
            Count (Length) := Count (Length) + Count (Length - 1);
         end loop;
         for Index in reverse 1 .. Self.Used_States loop
            Order (Count (Self.States (Index).Length)) := Index;
            Count (Self.States (Index).Length) :=
              Count (Self.States (Index).Length) - 1;
         end loop;
         for Rank in reverse Order'Range loop
            declare
               Shorter : constant Integer := Self.States (Order (Rank)).Link;
            begin
               Self.States (Shorter).Found :=
                 Self.States (Shorter).Found or Self.States (Order (Rank)).Found;
            end;
         end loop;
      end;
   end Gather_Texts;

   function Bits_For (Count : Positive) return Positive is
      Bits : Positive := 1;
   begin
      while 2 ** Bits < Count loop
         Bits := Bits + 1;
      end loop;
      return Bits;
   end Bits_For;

   function Latest_Sharing_Indexed
     (Texts : String; Ends : Text_Ends; Input : String) return Natural
   is
      Bytes : constant Natural := Texts'Length + Ends'Length;
      --  The texts and a NUL after each
      Bits  : constant Positive := Bits_For (2 * (3 * Bytes + 1));
      Index : Automaton_Access :=
        new Automaton
          (Last_State => 2 * Bytes,
           Last_Edge  => 3 * Bytes + 1,
           Last_Slot  => 2 ** Bits - 1);
      Last    : Natural := 0;
      Found   : Text_Set := 0;
      Latest  : constant Text_Set := Only (Ends'Last);
      Start   : Positive;
      At_Word : Natural := 0;
      --  While in a word: the state its bytes so far lead to
      Walking : Boolean := False;
      --  The word's bytes so far are all in the automaton
   begin
      Index.Shift := 32 - Bits;
      Index.States (0) := (Length => 0, Link => -1, Edges => 0, Found => 0);
      for K in Ends'Range loop
         for Byte of Texts (First_Of (Texts, Ends, K) .. Ends (K)) loop
            Extend (Index.all, Last, Folded (Byte), Only (K));
         end loop;
         Extend (Index.all, Last, Character'Val (0), 0);
      end loop;
      Gather_Texts (Index.all);

      --  A word at a time: the bytes between words are passed over, and so
      --  is the rest of a word once it has left the automaton, each in a
      --  loop of its own
      declare
         Position : Positive := Input'First;
      begin
         Words : loop
            while Position <= Input'Last
              and then not Word_Bytes (Input (Position))
            loop
               Position := Position + 1;
            end loop;
            exit Words when Position > Input'Last;
            Start := Position;
            At_Word := 0;
            Walking := True;
            while Position <= Input'Last and then Word_Bytes (Input (Position))
            loop
               declare
                  Place : constant Natural :=
                    Place_Of (Index.all, At_Word, Folded (Input (Position)));
               begin
                  Position := Position + 1;
                  if not Is_Edge (Index.all, Place) then
                     Walking := False;
                     while Position <= Input'Last
                       and then Word_Bytes (Input (Position))
                     loop
                        Position := Position + 1;
                     end loop;
                     exit;
                  end if;
                  At_Word := Index.Slots (Place).Target;
               end;
            end loop;
            if Walking and then Position - Start >= Min_Word_Bytes then
               Found := Found or Index.States (At_Word).Found;
               exit Words when (Found and Latest) /= 0;
            end if;
            exit Words when Position > Input'Last;
         end loop Words;
      end;
      Free (Index);
      for K in reverse Ends'Range loop
         if (Found and Only (K)) /= 0 then
            return K;
         end if;
      end loop;
      return 0;
   end Latest_Sharing_Indexed;

   --  The direct search first, which ends early as soon as it finds a word
   --  (a turn nearly always shares one with the latest), given as much work
   --  as indexing the texts would cost; the index only when that was not
   --  enough.  Either way the work is at most twice the cheaper of the two.
   function Latest_Sharing
     (Texts : String; Ends : Text_Ends; Input : String) return Natural
   is
      Budget : constant Natural :=
        Index_Cost_In_Positions * (Texts'Length + Ends'Length);
      Latest : Natural;
      Done   : Boolean;
   begin
      Latest_Sharing_Directly (Texts, Ends, Input, Budget, Latest, Done);
      if Done then
         return Latest;
      else
         return Latest_Sharing_Indexed (Texts, Ends, Input);
      end if;
   end Latest_Sharing;

   ---------------------------------------------------------------------
   --  One word in a text

   type Border_Array is array (Positive range <>) of Natural;
   type Border_Access is access Border_Array;
   procedure Free is new Ada.Unchecked_Deallocation
     (Border_Array, Border_Access);

   function Occurs_Folded (Word, Text : String) return Boolean is
   begin
      if Word'Length = 0 then
         return True;
      elsif Word'Length > Text'Length then
         return False;
      elsif Text'Length <= Direct_Input_Limit then
         --  Directly, as Latest_Sharing does with a short input
         return Occurs_Folded_Directly (Word, Text);
      end if;
      declare
         --  Border (J): the length of the longest proper prefix of
         --  Word (1 .. J) that is also its suffix.  On the heap: a fixture
         --  may give a word of any length.
         Border  : Border_Access := new Border_Array (1 .. Word'Length);
         Matched : Natural := 0;
         Found   : Boolean := False;

         function At_Rank (J : Positive) return Character is
           (Word (Word'First + J - 1));
      begin
         Border (1) := 0;
         for J in 2 .. Word'Length loop
            Matched := Border (J - 1);
            while Matched > 0 and then At_Rank (Matched + 1) /= At_Rank (J) loop
               Matched := Border (Matched);
            end loop;
            if At_Rank (Matched + 1) = At_Rank (J) then
               Matched := Matched + 1;
            end if;
            Border (J) := Matched;
         end loop;

         --  Matched: how much of Word ends at the byte just read.  Where
         --  none of it does, bytes that cannot begin it are passed over in
         --  a loop of their own: in most texts that is nearly every byte.
         Matched := 0;
         declare
            Position : Positive := Text'First;
            C        : Character;
         begin
            loop
               if Matched = 0 then
                  while Position <= Text'Last
                    and then Folded (Text (Position)) /= At_Rank (1)
                  loop
                     Position := Position + 1;
                  end loop;
                  exit when Position > Text'Last;
               end if;
               C := Folded (Text (Position));
               while Matched > 0 and then At_Rank (Matched + 1) /= C loop
                  Matched := Border (Matched);
               end loop;
               if At_Rank (Matched + 1) = C then
                  Matched := Matched + 1;
               end if;
               if Matched = Word'Length then
                  Found := True;
                  exit;
               end if;
               exit when Position = Text'Last;
               Position := Position + 1;
            end loop;
         end;
         Free (Border);
         return Found;
      end;
   end Occurs_Folded;

   ---------------------------------------------------------------------
   --  Several words in a text

   Max_Table_Entries : constant := 2 ** 22;
   --  The largest automaton Find_Folded builds (16 MiB): a fixture whose
   --  contains rules would need more (some 16,000 bytes of words over
   --  every byte there is) is searched a word at a time

   type Class_Map is array (Character) of Natural;
   type Natural_Array is array (Natural range <>) of Natural;
   type Natural_Access is access Natural_Array;
   procedure Free is new Ada.Unchecked_Deallocation
     (Natural_Array, Natural_Access);

   procedure Find_Folded
     (Words : Word_List; Text : String; Found : out Word_Flags)
   is
      Classes : Class_Map := [others => 0];
      --  Each byte a word holds numbered from 1, each other byte 0; an
      --  upper-case ASCII letter of the text is its lower-case letter's
      Class_Count : Natural := 0;
      Total       : Natural := 0;
      --  Bytes of all the words: the trie has at most one state more
   begin
      Found := [others => False];
      if Text'Length <= Direct_Input_Limit then
         for K in Words'Range loop
            Found (K) := Occurs_Folded (Words (K).all, Text);
         end loop;
         return;
      end if;
      for Word of Words loop
         Total := Total + Word'Length;
         for Byte of Word.all loop
            if Classes (Byte) = 0 then
               Class_Count := Class_Count + 1;
               Classes (Byte) := Class_Count;
            end if;
         end loop;
      end loop;
      for Letter in Character range 'A' .. 'Z' loop
         Classes (Letter) := Classes (Folded (Letter));
      end loop;

      --  A pass a word costs about Text'Length each; the automaton costs
      --  its table to build, then one pass
      if Words'Length * Long_Long_Integer (Text'Length)
           <= Long_Long_Integer (Total + 1) * Long_Long_Integer (Class_Count + 1)
        or else (Total + 1) * (Class_Count + 1) > Max_Table_Entries
      then
         for K in Words'Range loop
            Found (K) := Occurs_Folded (Words (K).all, Text);
         end loop;
         return;
      end if;

      declare
         Width : constant Positive := Class_Count + 1;
         Last  : constant Natural := Total;
         --  States 0 (the root) .. Last
         Step  : Natural_Access := new Natural_Array'(0 .. (Last + 1) * Width - 1 => 0);
         --  Step (State * Width + Class): the state after one more byte.
         --  While the trie is built, 0 means no child (no child is the
         --  root); once complete, 0 is the root.
         Ending  : Natural_Array (0 .. Last) := [others => 0];
         --  The first word that ends at a state, 0 for none
         Also    : Natural_Array (Words'Range) := [others => 0];
         --  The next word ending at the same state (a repeated word)
         Fail    : Natural_Array (0 .. Last) := [others => 0];
         Output  : array (0 .. Last) of Integer := [others => -1];
         --  The nearest state on the failure chain where a word ends
         Pending : array (0 .. Last) of Boolean := [others => False];
         --  The state, or one on its output chain, has words not yet
         --  marked found
         Queue   : Natural_Array (0 .. Last);
         Used    : Natural := 0;
         Remaining : Natural := Words'Length;
         State   : Natural := 0;

         --  Mark the words that end at Reached and along its output chain;
         --  a state passed once is never passed again, for its chain was
         --  passed whole with it
         procedure Report (Reached : Natural) is
            At_State : Integer := Reached;
         begin
            while At_State >= 0 and then Pending (At_State) loop
               Pending (At_State) := False;
               declare
                  Word : Natural := Ending (At_State);
               begin
                  while Word /= 0 loop
                     Found (Word) := True;
                     Remaining := Remaining - 1;
                     Word := Also (Word);
                  end loop;
               end;
               At_State := Output (At_State);
            end loop;
         end Report;
      begin
         for K in Words'Range loop
            State := 0;
            for Byte of Words (K).all loop
               declare
                  Edge : Natural renames Step (State * Width + Classes (Byte));
               begin
                  if Edge = 0 then
                     Used := Used + 1;
                     Edge := Used;
                  end if;
                  State := Edge;
               end;
            end loop;
            Also (K) := Ending (State);
            Ending (State) := K;
         end loop;

         --  Breadth first, so a state's failure is complete before its
         --  children need it; a missing step takes the failure's step
         declare
            Head, Tail : Natural := 0;
         begin
            Queue (Tail) := 0;
            Tail := Tail + 1;
            while Head < Tail loop
               declare
                  Parent : constant Natural := Queue (Head);
               begin
                  Head := Head + 1;
                  Pending (Parent) := Ending (Parent) /= 0 or else Output (Parent) >= 0;
                  for Class in 1 .. Class_Count loop
                     declare
                        Child : constant Natural := Step (Parent * Width + Class);
                        Via   : constant Natural :=
                          (if Parent = 0 then 0 else Step (Fail (Parent) * Width + Class));
                     begin
                        if Child = 0 then
                           Step (Parent * Width + Class) := Via;
                        else
                           Fail (Child) := Via;
                           Output (Child) :=
                             (if Ending (Via) /= 0 then Via else Output (Via));
                           Queue (Tail) := Child;
                           Tail := Tail + 1;
                        end if;
                     end;
                  end loop;
               end;
            end loop;
         end;

         State := 0;
         if Pending (0) then
            Report (0);
         end if;
         declare
            Begins : constant array (Character) of Boolean :=
              [for C in Character => Step (Classes (C)) /= 0];
            --  The bytes that leave the root: at the root, where most of a
            --  text is read, the others are passed over in a loop of their
            --  own
            Position : Positive := Text'First;
         begin
            while Remaining > 0 and then Position <= Text'Last loop
               if State = 0 then
                  while Position <= Text'Last
                    and then not Begins (Text (Position))
                  loop
                     Position := Position + 1;
                  end loop;
                  exit when Position > Text'Last;
               end if;
               State := Step (State * Width + Classes (Text (Position)));
               if Pending (State) then
                  Report (State);
               end if;
               Position := Position + 1;
            end loop;
         end;
         Free (Step);
      end;
   end Find_Folded;

end Organs.Word_Search;
