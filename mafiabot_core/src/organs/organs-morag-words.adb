package body Organs.Morag.Words is

   use type Interfaces.Unsigned_32;
   use type Interfaces.Unsigned_64;

   function To_Bytes is new Ada.Unchecked_Conversion (Term_Lead, Lead_Bytes);
   function To_Half_Bytes is new Ada.Unchecked_Conversion
     (Interfaces.Unsigned_16, Half_Bytes);

   procedure Set_Postings
     (Index : in out String; At_Byte : Positive; Postings : Natural)
   with Inline is
   begin
      Index (At_Byte + Postings_Offset .. At_Byte + Postings_Offset + 1) :=
        To_Half_Bytes (Interfaces.Unsigned_16 (Postings));
   end Set_Postings;

   function Table_Slots (Bytes : Natural) return Positive is
      Slots : Positive := 16;
   begin
      while Slots < 2 * Most_Words (Bytes) loop
         Slots := 2 * Slots;
      end loop;
      return Slots;
   end Table_Slots;

   procedure Collect (Text : String; Set : out Word_Set) is
      --  Every index below stays within its array: Text's by the loops' own
      --  tests (At_Byte <= Text'Last, a word within the bytes scanned),
      --  the words' by Most = Most_Words (Text'Length) (the precondition,
      --  which the shipped build checks), the table's by the mask (Slots =
      --  Table_Slots, a power of two); the checks cost more than the scan
      pragma Suppress (Index_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
      Mask : constant Word_Key := Word_Key (Set.Slots - 1);

      --  Whether Text (First .. Last), of Prefix, and the Known-th word
      --  fold alike
      function Spells
        (First, Last : Positive; Prefix : Word_Prefix; Known : Positive)
        return Boolean is
        (Prefix = Set.Words (Known).Prefix
         and then Last - First = Set.Words (Known).Last - Set.Words (Known).First
         and then (for all Offset in Prefix_Bytes .. Last - First =>
                     Word_Fold (Text (First + Offset))
                     = Word_Fold (Text (Set.Words (Known).First + Offset))));

      --  Count Text (First .. Last), of Hash and Prefix, among the words
      procedure Add
        (First, Last : Positive; Hash : Fnv_Hash.Hash; Prefix : Word_Prefix)
      is
         Key  : constant Word_Key := Key_Of (Hash);
         Slot : Positive := Natural (Key and Mask) + 1;
         Word : Natural;
      begin
         loop
            Word := Set.Table (Slot);
            exit when Word = 0
              or else (Set.Words (Word).Key = Key
                       and then Spells (First, Last, Prefix, Word));
            Slot := Natural (Word_Key (Slot) and Mask) + 1;
         end loop;
         if Word = 0 then
            Set.Distinct := Set.Distinct + 1;
            Word := Set.Distinct;
            Set.Table (Slot) := Word;
            Set.Words (Word).Key := Key;
            Set.Words (Word).Prefix := Prefix;
            Set.Words (Word).First := First;
            Set.Words (Word).Last := Last;
            Set.Words (Word).Times := 1;
         else
            Set.Words (Word).Times := Set.Words (Word).Times + 1;
         end if;
         Set.Total := Set.Total + 1;
      end Add;

      At_Byte : Positive := Text'First;
      First   : Positive;
      Hash    : Fnv_Hash.Hash;
      Folded  : Character;
      Prefix  : Word_Prefix;
      Shift   : Natural;
      --  Where the word's next byte goes in Prefix, while it has room
   begin
      Set.Table := [others => 0];
      Set.Distinct := 0;
      Set.Total := 0;
      while At_Byte <= Text'Last loop
         Folded := Word_Fold (Text (At_Byte));
         if Folded /= Not_A_Word then
            First := At_Byte;
            Hash := Fnv_Hash.Basis;
            Prefix := 0;
            Shift := 0;
            loop
               Hash := Fnv_Hash.Step (Hash, Folded);
               if Shift < 8 * Prefix_Bytes then
                  Prefix := Prefix
                    or Interfaces.Shift_Left
                         (Word_Prefix (Character'Pos (Folded)), Shift);
                  Shift := Shift + 8;
               end if;
               At_Byte := At_Byte + 1;
               exit when At_Byte > Text'Last;
               Folded := Word_Fold (Text (At_Byte));
               exit when Folded = Not_A_Word;
            end loop;
            --  At_Byte is past the word: the byte that ends it, or the
            --  text's end
            if At_Byte - First >= Min_Word then
               Add (First, At_Byte - 1, Hash, Prefix);
            end if;
         end if;
         At_Byte := At_Byte + 1;
      end loop;
   end Collect;

   --  Whether the bytes past Prefix_Bytes of the word of Index whose lead
   --  is at At_Byte, Size of them in all, are those of Set's Known-th
   --  (collected from Text): only for a word longer than its prefix, so
   --  out of Find, which is inlined everywhere
   function Spells_Rest
     (Set     : Word_Set;
      Text    : String;
      Index   : String;
      At_Byte : Positive;
      Size    : Natural;
      Known   : Positive) return Boolean
   is
      First : constant Positive := Set.Words (Known).First;
      Rest  : constant Positive := At_Byte + Term_Lead_Bytes - Prefix_Bytes;
      --  Index (Rest + Offset) is the word's byte Offset past its prefix
   begin
      return (for all Offset in Prefix_Bytes .. Size - 1 =>
                Word_Fold (Text (First + Offset)) = Index (Rest + Offset));
   end Spells_Rest;

   function Find
     (Set     : Word_Set;
      Text    : String;
      Index   : String;
      At_Byte : Positive;
      Lead    : Term_Lead) return Natural
   is
      Mask : constant Word_Key := Word_Key (Set.Slots - 1);
      Size : constant Natural := Natural (Lead.Size);
      Slot : Positive := Natural (Lead.Key and Mask) + 1;
      Word : Natural := Set.Table (Slot);
   begin
      while Word /= 0 loop
         declare
            Known : Word_Entry renames Set.Words (Word);
         begin
            if Known.Key = Lead.Key
              and then Known.Prefix = Lead.Prefix
              and then Known.Last - Known.First + 1 = Size
              and then (Size <= Prefix_Bytes
                        or else Spells_Rest
                                  (Set, Text, Index, At_Byte, Size, Word))
            then
               return Word;
            end if;
         end;
         Slot := Natural (Word_Key (Slot) and Mask) + 1;
         Word := Set.Table (Slot);
      end loop;
      return 0;
   end Find;

   function Added
     (Index : String; Keeping : Natural; Text : String) return String
   is
      Set : Word_Set (Most_Words (Text'Length), Table_Slots (Text'Length));
   begin
      Collect (Text, Set);
      declare
         New_Bytes : constant Natural :=
           Set.Distinct * (Term_Lead_Bytes + Posting_Bytes) + Text'Length;
         --  What Text's words add at most: each a posting, and the lead
         --  and spelling of a word the index lacks (the spellings past
         --  their prefixes are fewer bytes than Text)
      begin
         declare
            Result  : String (1 .. Index'Length + Count_Bytes + New_Bytes);
            Last    : Natural := 0;
            Matched : array (1 .. Set.Distinct) of Boolean :=
              [others => False];
            --  Text's words the index holds already

            procedure Put (Byte : Natural) with Inline is
            begin
               Last := Last + 1;
               Result (Last) := Character'Val (Byte);
            end Put;

            procedure Put (Lead : Term_Lead) with Inline is
            begin
               Result (Last + 1 .. Last + Term_Lead_Bytes) := To_Bytes (Lead);
               Last := Last + Term_Lead_Bytes;
            end Put;

            --  The newest excerpt's posting of its Word-th distinct word
            procedure Put_Newest (Word : Positive) with Inline is
            begin
               Put (Character'Pos (Result (2)));
               Put (Set.Words (Word).Times - 1);
            end Put_Newest;

            At_Byte : Positive := First_Term (Index);

            --  Index (Unchanged .. At_Byte - 1): bytes that stay as they
            --  are (words that keep every posting and gain none, and the
            --  kept postings of a word that lost its oldest), copied at once
            --  when a word that changes, or the end, comes
            Unchanged : Positive := At_Byte;

            --  Index (Unchanged .. Through) copied, and Unchanged past it
            --  (inlined always: once a word that changes, where a call
            --  costs as much as the copy)
            procedure Copy_Through (Through : Natural) with Inline_Always is
            begin
               Result (Last + 1 .. Last + Through + 1 - Unchanged) :=
                 Index (Unchanged .. Through);
               Last := Last + Through + 1 - Unchanged;
               Unchanged := Through + 1;
            end Copy_Through;
         begin
            Put (Keeping + 1);
            Put ((Character'Pos (Index (Index'First + 1)) + 1) mod 256);
            --  The new excerpt's number; the kept ones keep theirs
            Result (Last + 1 .. Last + Count_Bytes * Keeping) :=
              Index (First_Term (Index) - Count_Bytes * Keeping
                     .. First_Term (Index) - 1);
            Last := Last + Count_Bytes * Keeping;
            Put (Set.Total mod 256);
            Put (Set.Total / 256);
            while At_Byte <= Index'Last loop
               declare
                  Lead    : constant Term_Lead := Lead_At (Index, At_Byte);
                  Held    : constant Natural := Natural (Lead.Postings);
                  First   : constant Positive := Postings_At (At_Byte, Lead);
                  Next    : constant Positive := First + Posting_Bytes * Held;
                  Word    : constant Natural :=
                    Find (Set, Text, Index, At_Byte, Lead);
                  Dropped : Natural := 0;
                  --  The postings that go: those of an age of Keeping or
                  --  more, which come first (oldest first)
               begin
                  while Dropped < Held
                    and then Age_At (Index, First + Posting_Bytes * Dropped)
                             >= Keeping
                  loop
                     Dropped := Dropped + 1;
                  end loop;
                  if Word = 0 and then Dropped = Held then
                     --  No excerpt holds the word any more
                     Copy_Through (At_Byte - 1);
                     Unchanged := Next;
                  elsif Word /= 0 or else Dropped > 0 then
                     declare
                        Lead : constant Positive :=
                          Last + 1 + At_Byte - Unchanged;
                        --  Where the word's lead lands in Result
                     begin
                        if Dropped = 0 then
                           Copy_Through (Next - 1);
                        else
                           Copy_Through (First - 1);
                           Unchanged := First + Posting_Bytes * Dropped;
                           if Word /= 0 then
                              Copy_Through (Next - 1);
                           end if;
                        end if;
                        Set_Postings
                          (Result, Lead,
                           Held - Dropped + Boolean'Pos (Word /= 0));
                        if Word /= 0 then
                           Put_Newest (Word);
                           Matched (Word) := True;
                        end if;
                     end;
                  end if;
                  At_Byte := Next;
               end;
            end loop;
            Copy_Through (Index'Last);
            for Word in 1 .. Set.Distinct loop
               if not Matched (Word) then
                  Put (Term_Lead'
                         (Postings => 1,
                          Size     => Interfaces.Unsigned_16
                            (Set.Words (Word).Last - Set.Words (Word).First + 1),
                          Key      => Set.Words (Word).Key,
                          Prefix   => Set.Words (Word).Prefix));
                  for Byte in Set.Words (Word).First + Prefix_Bytes
                              .. Set.Words (Word).Last
                  loop
                     Last := Last + 1;
                     Result (Last) := Word_Fold (Text (Byte));
                  end loop;
                  Put_Newest (Word);
               end if;
            end loop;
            return Result (1 .. Last);
         end;
      end;
   end Added;

end Organs.Morag.Words;
