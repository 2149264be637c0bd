with Interfaces;
with Fnv_Hash;

package body Organs.Cognition is

   use type Fnv_Hash.Hash;

   Max_Words : constant := 512;
   --  More words than this in one text are not compared (outputs and
   --  thoughts quote at most a short excerpt of the input)

   --  Calls Take with each word of Text in turn (a run of letters, digits
   --  and non-ASCII bytes, compared without case) as the FNV-1a hash of its
   --  folded bytes, until Take has had Enough.  Two texts share a word iff
   --  they share its hash, barring a collision: FNV-1a resists none a user
   --  chooses, so a crafted input can seem to share a word it does not.
   --  That shifts one coherence score a little, and the coherence check is
   --  a drift detector that nothing optimizes (L4), so the bytes are not compared
   --  as Organs.Morag.Words compares them.
   generic
      with procedure Take (Hash : Fnv_Hash.Hash; Enough : out Boolean);
   procedure Scan_Words (Text : String);

   procedure Scan_Words (Text : String) is
      --  The last byte of Text that is no part of a word, or Text'First - 1
      --  if it has none.  A word before it is sure to end at a byte that is
      --  no part of it, so the loop over its bytes need not look out for
      --  the end of Text; only a word after it, ending Text, must.
      function Last_Break return Natural is
      begin
         for Index in reverse Text'Range loop
            if Word_Fold (Text (Index)) = Not_A_Word then
               return Index;
            end if;
         end loop;
         return Text'First - 1;
      end Last_Break;

      Stop   : constant Natural := Last_Break;

      --  Every index below is in Text'Range: the loop between words stops
      --  at Stop, a word before Stop ends at a break no later than Stop,
      --  and the word after Stop ends Text, whatever the caller passed (no
      --  precondition is leant on): the checks would repeat the loop's tests
      pragma Suppress (Index_Check);
      pragma Suppress (Overflow_Check);

      Hash   : Fnv_Hash.Hash;
      Byte   : Character;
      Enough : Boolean := False;
   begin
      if Stop >= Text'First then
         declare
            Index : Positive := Text'First;
         begin
            loop
               Byte := Word_Fold (Text (Index));
               if Byte /= Not_A_Word then
                  Hash := Fnv_Hash.Step (Fnv_Hash.Basis, Byte);
                  loop
                     Index := Index + 1;
                     Byte := Word_Fold (Text (Index));
                     exit when Byte = Not_A_Word;
                     Hash := Fnv_Hash.Step (Hash, Byte);
                  end loop;
                  Take (Hash, Enough);
                  exit when Enough;
               end if;
               exit when Index = Stop;
               Index := Index + 1;
            end loop;
         end;
      end if;
      if not Enough and then Stop < Text'Last then
         Hash := Fnv_Hash.Basis;
         for Index in Stop + 1 .. Text'Last loop
            Hash := Fnv_Hash.Step (Hash, Word_Fold (Text (Index)));
         end loop;
         Take (Hash, Enough);
      end if;
   end Scan_Words;

   Max_Slots : constant := 4 * Max_Words;
   --  Room for both texts' words with the table at most half full, which
   --  keeps probe runs short and always leaves a vacant slot to end one

   type Slot_Index is mod Max_Slots;

   type Slot_State is (Vacant, Said, Thought);
   --  Said: a word of the output the thought has not used (yet); Thought:
   --  a word of the thought, which was counted as shared if it was Said

   type Hash_Slots is array (Slot_Index) of Fnv_Hash.Hash
   with Relaxed_Initialization;
   --  A slot's hash is read only where its state is not Vacant

   type State_Slots is array (Slot_Index) of Slot_State
   with Relaxed_Initialization;
   --  Slots past a table's Mask are never cleared, so never read

   --  The words of the output and of the thought in one open-addressing
   --  table of Mask + 1 slots (a power of two) probed linearly.  Vacancy is
   --  a state byte, not a reserved hash, so every hash is a word's and
   --  clearing a slot writes one byte.  Only slots 0 .. Mask are cleared
   --  or read: a table sized for the texts, not for Max_Words, is what
   --  keeps short texts cheap.
   type Vocabulary is record
      Hashes : Hash_Slots;
      States : State_Slots;
      Mask   : Slot_Index;
      Held   : Natural;
      --  Slots not Vacant
   end record;

   function Slot_Count (Words : Vocabulary) return Positive is
     (Natural (Words.Mask) + 1);

   --  An empty table with room for every word of two texts of these
   --  lengths: words take a byte and a separator each, so a text of Length
   --  bytes has at most (Length + 1) / 2, of which Max_Words are kept;
   --  twice as many slots as words, so the table stays at most half full
   procedure Clear (Words : out Vocabulary; Output, Thought : Natural)
   with Post => Words.Held = 0
     and then Slot_Count (Words)
              >= 2 * (Natural'Min ((Output + 1) / 2, Max_Words)
                      + Natural'Min ((Thought + 1) / 2, Max_Words))
   is
      Room : constant Natural :=
        Natural'Min ((Output + 1) / 2, Max_Words)
        + Natural'Min ((Thought + 1) / 2, Max_Words);
      Size : Positive := 2;
   begin
      while Size < 2 * Room loop
         Size := 2 * Size;
      end loop;
      Words.Mask := Slot_Index (Size - 1);
      Words.States (0 .. Words.Mask) := [others => Vacant];
      Words.Held := 0;
   end Clear;

   --  The slot holding Hash, or else the vacant slot where it goes
   function Slot_For
     (Words : Vocabulary; Hash : Fnv_Hash.Hash) return Slot_Index
   with Inline, Pre => Words.Held < Slot_Count (Words)
   is
      --  The multiply leaves FNV-1a's upper half the better mixed
      Slot : Slot_Index :=
        Slot_Index'Mod (Interfaces.Shift_Right (Hash, 32)) and Words.Mask;
   begin
      while Words.States (Slot) /= Vacant
        and then Words.Hashes (Slot) /= Hash
      loop
         Slot := (Slot + 1) and Words.Mask;
      end loop;
      return Slot;
   end Slot_For;

   --  Puts Hash in the vacant Slot as a word of the text State names
   procedure Fill
     (Words : in out Vocabulary;
      Slot  : Slot_Index;
      Hash  : Fnv_Hash.Hash;
      State : Slot_State)
   with Inline,
        Pre  => Words.States (Slot) = Vacant
     and then State /= Vacant
     and then Words.Held < Slot_Count (Words) / 2
   is
   begin
      Words.Hashes (Slot) := Hash;
      Words.States (Slot) := State;
      Words.Held := Words.Held + 1;
   end Fill;

   function Cohere (Output, Final_Cognition : String) return Coherence is
      Words : Vocabulary;
      Said_Count, Thought_Count, Both : Natural := 0;

      --  Only the first Max_Words distinct words of a text are compared
      procedure Take_Said (Hash : Fnv_Hash.Hash; Enough : out Boolean)
      with Inline
      is
         Slot : constant Slot_Index := Slot_For (Words, Hash);
      begin
         if Words.States (Slot) = Vacant then
            Fill (Words, Slot, Hash, Said);
            Said_Count := Said_Count + 1;
         end if;
         Enough := Said_Count = Max_Words;
      end Take_Said;

      --  The output is all in: a thought's word found Said is shared
      procedure Take_Thought (Hash : Fnv_Hash.Hash; Enough : out Boolean)
      with Inline
      is
         Slot : constant Slot_Index := Slot_For (Words, Hash);
      begin
         case Words.States (Slot) is
            when Vacant =>
               Fill (Words, Slot, Hash, Thought);
               Thought_Count := Thought_Count + 1;
            when Said =>
               Words.States (Slot) := Thought;
               Thought_Count := Thought_Count + 1;
               Both := Both + 1;
            when Thought =>
               null;
         end case;
         Enough := Thought_Count = Max_Words;
      end Take_Thought;

      procedure Collect_Said is new Scan_Words (Take_Said);
      procedure Collect_Thought is new Scan_Words (Take_Thought);
   begin
      Clear (Words, Output'Length, Final_Cognition'Length);
      Collect_Said (Output);
      Collect_Thought (Final_Cognition);
      declare
         Either : constant Natural := Said_Count + Thought_Count - Both;
         Score  : constant Millis :=
           (if Either = 0 then Energy_Gate.Full else Both * 1000 / Either);
      begin
         return (Score => To_Fraction (Score),
                 Drift => To_Fraction (Energy_Gate.Full - Score));
      end;
   end Cohere;

end Organs.Cognition;
