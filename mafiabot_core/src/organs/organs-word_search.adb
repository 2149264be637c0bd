with Ada.Unchecked_Deallocation;
with Interfaces;

package body Organs.Word_Search is

   use type Interfaces.Unsigned_64;

   Index_Cost_Per_Byte : constant := 32;
   --  Building the automaton costs about as much, per byte of the texts, as
   --  this many direct comparisons of a byte (measured with the bench's
   --  worst-case rows: 16 texts of 1,024 bytes index in ~0.5 ms)

   Direct_Input_Limit : constant := 4 * Index_Cost_Per_Byte;
   --  A word of Min_Word_Bytes and the byte that ends it take four: an input
   --  this long has at most Index_Cost_Per_Byte words to look for, and
   --  looking for each directly costs at most its length per byte of the
   --  texts, so up to here the direct search is the cheaper one

   pragma Compile_Time_Error
     (Direct_Input_Limit < Min_Word_Bytes + 1,
      "no input would be searched directly");

   function First_Of (Texts : String; Ends : Text_Ends; K : Positive)
     return Positive is
     (if K = Ends'First then Texts'First else Ends (K - 1) + 1)
   with Pre => K in Ends'Range;

   ---------------------------------------------------------------------
   --  Directly: each word of the input against each position of a text

   --  Whether some word of Min_Word_Bytes or more of Left occurs in Right,
   --  both compared with ASCII folding
   function Shares_Word (Left, Right : String) return Boolean is
      --  Whether Left (First .. Last) stands in Right from At_Byte on
      --  (At_Byte - 1 <= Right'Last - (Last - First + 1), as the caller
      --  sees to)
      function Stands_At (First, Last, At_Byte : Positive) return Boolean is
        (for all K in First .. Last =>
           Folded (Right (At_Byte + (K - First))) = Folded (Left (K)));

      Start : Natural := 0;
   begin
      for Index in Left'First .. Left'Last + 1 loop
         if Index <= Left'Last and then Is_Word_Byte (Left (Index)) then
            if Start = 0 then
               Start := Index;
            end if;
         elsif Start /= 0 then
            if Index - Start >= Min_Word_Bytes
              and then (for some At_Byte in
                          Right'First .. Right'Last - (Index - Start) + 1 =>
                          Stands_At (Start, Index - 1, At_Byte))
            then
               return True;
            end if;
            Start := 0;
         end if;
      end loop;
      return False;
   end Shares_Word;

   function Latest_Sharing_Directly
     (Texts : String; Ends : Text_Ends; Input : String) return Natural is
   begin
      for K in reverse Ends'Range loop
         if Shares_Word (Input, Texts (First_Of (Texts, Ends, K) .. Ends (K)))
         then
            return K;
         end if;
      end loop;
      return 0;
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
   --  of its set.  Transitions are edges in one array, found through an
   --  open-addressing table keyed by (state, byte); the automaton of n
   --  bytes has at most 2n states and 3n edges.

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

   type Edge is record
      From   : Natural;
      Byte   : Character;
      Target : Natural;
      Next   : Natural;
      --  The next edge of From, 0 for none
   end record;

   type State_Array is array (Natural range <>) of State;
   type Edge_Array is array (Positive range <>) of Edge;
   type Slot_Array is array (Natural range <>) of Natural;
   --  Edge numbers, 0 for a vacant slot

   type Automaton (Last_State, Last_Edge, Last_Slot : Natural) is record
      States : State_Array (0 .. Last_State);
      Edges  : Edge_Array (1 .. Last_Edge);
      Slots  : Slot_Array (0 .. Last_Slot) := [others => 0];
      Used_States : Natural := 0;
      Used_Edges  : Natural := 0;
   end record;
   --  Last_Slot + 1 is a power of two at least twice Last_Edge: probe runs
   --  stay short and always end at a vacant slot

   type Automaton_Access is access Automaton;
   procedure Free is new Ada.Unchecked_Deallocation
     (Automaton, Automaton_Access);

   function Slot_Of (Self : Automaton; From : Natural; Byte : Character)
     return Natural is
     (Natural
        (Interfaces.Shift_Right
           ((Interfaces.Unsigned_64 (From) * 256
             + Interfaces.Unsigned_64 (Character'Pos (Byte)))
            * 16#9E37_79B9_7F4A_7C15#, 32)
         and Interfaces.Unsigned_64 (Self.Last_Slot)));

   --  The edge from From on Byte, or 0
   function Edge_Of (Self : Automaton; From : Natural; Byte : Character)
     return Natural
   is
      Slot : Natural := Slot_Of (Self, From, Byte);
   begin
      while Self.Slots (Slot) /= 0 loop
         declare
            Candidate : Edge renames Self.Edges (Self.Slots (Slot));
         begin
            if Candidate.From = From and then Candidate.Byte = Byte then
               return Self.Slots (Slot);
            end if;
         end;
         Slot := (Slot + 1) mod (Self.Last_Slot + 1);
      end loop;
      return 0;
   end Edge_Of;

   procedure Add_Edge
     (Self : in out Automaton; From : Natural; Byte : Character;
      Target : Natural)
   with Pre => Edge_Of (Self, From, Byte) = 0
     and then Self.Used_Edges < Self.Last_Edge
   is
      Slot : Natural := Slot_Of (Self, From, Byte);
   begin
      Self.Used_Edges := Self.Used_Edges + 1;
      Self.Edges (Self.Used_Edges) :=
        (From => From, Byte => Byte, Target => Target,
         Next => Self.States (From).Edges);
      Self.States (From).Edges := Self.Used_Edges;
      while Self.Slots (Slot) /= 0 loop
         Slot := (Slot + 1) mod (Self.Last_Slot + 1);
      end loop;
      Self.Slots (Slot) := Self.Used_Edges;
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
   --  extended by Byte, which belongs to the texts In
   procedure Extend
     (Self : in out Automaton; Last : in out Natural; Byte : Character;
      In_Text : Text_Set)
   is
      Current : constant Natural :=
        New_State (Self, Self.States (Last).Length + 1, In_Text);
      From    : Integer := Last;
   begin
      while From /= -1 and then Edge_Of (Self, From, Byte) = 0 loop
         Add_Edge (Self, From, Byte, Current);
         From := Self.States (From).Link;
      end loop;
      if From = -1 then
         Self.States (Current).Link := 0;
      else
         declare
            Next : constant Natural :=
              Self.Edges (Edge_Of (Self, From, Byte)).Target;
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
                     Add_Edge (Self, Clone, Self.Edges (Copied).Byte,
                               Self.Edges (Copied).Target);
                     Copied := Self.Edges (Copied).Next;
                  end loop;
                  while From /= -1 loop
                     declare
                        Redirected : constant Natural :=
                          Edge_Of (Self, From, Byte);
                     begin
                        exit when Redirected = 0
                          or else Self.Edges (Redirected).Target /= Next;
                        Self.Edges (Redirected).Target := Clone;
                     end;
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

   function Power_Of_Two_Above (Count : Positive) return Positive is
      Size : Positive := 2;
   begin
      while Size < Count loop
         Size := 2 * Size;
      end loop;
      return Size;
   end Power_Of_Two_Above;

   function Latest_Sharing_Indexed
     (Texts : String; Ends : Text_Ends; Input : String) return Natural
   is
      Bytes : constant Natural := Texts'Length + Ends'Length;
      --  The texts and a NUL after each
      Index : Automaton_Access :=
        new Automaton
          (Last_State => 2 * Bytes,
           Last_Edge  => 3 * Bytes + 1,
           Last_Slot  => Power_Of_Two_Above (2 * (3 * Bytes + 1)) - 1);
      Last    : Natural := 0;
      Found   : Text_Set := 0;
      Latest  : constant Text_Set := Only (Ends'Last);
      Start   : Natural := 0;
      At_Word : Natural := 0;
      --  While in a word: the state its bytes so far lead to, 0 once it
      --  has left the automaton (or before its first byte)
      Walking : Boolean := False;
   begin
      Index.States (0) := (Length => 0, Link => -1, Edges => 0, Found => 0);
      for K in Ends'Range loop
         for Byte of Texts (First_Of (Texts, Ends, K) .. Ends (K)) loop
            Extend (Index.all, Last, Folded (Byte), Only (K));
         end loop;
         Extend (Index.all, Last, Character'Val (0), 0);
      end loop;
      Gather_Texts (Index.all);

      for Position in Input'First .. Input'Last + 1 loop
         if Position <= Input'Last and then Is_Word_Byte (Input (Position))
         then
            if Start = 0 then
               Start := Position;
               At_Word := 0;
               Walking := True;
            end if;
            if Walking then
               declare
                  Step : constant Natural :=
                    Edge_Of (Index.all, At_Word, Folded (Input (Position)));
               begin
                  if Step = 0 then
                     Walking := False;
                  else
                     At_Word := Index.Edges (Step).Target;
                  end if;
               end;
            end if;
         elsif Start /= 0 then
            if Walking and then Position - Start >= Min_Word_Bytes then
               Found := Found or Index.States (At_Word).Found;
               exit when (Found and Latest) /= 0;
            end if;
            Start := 0;
         end if;
      end loop;
      Free (Index);
      for K in reverse Ends'Range loop
         if (Found and Only (K)) /= 0 then
            return K;
         end if;
      end loop;
      return 0;
   end Latest_Sharing_Indexed;

   function Latest_Sharing
     (Texts : String; Ends : Text_Ends; Input : String) return Natural is
   begin
      if Input'Length <= Direct_Input_Limit or else Ends'Length = 0 then
         return Latest_Sharing_Directly (Texts, Ends, Input);
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

end Organs.Word_Search;
