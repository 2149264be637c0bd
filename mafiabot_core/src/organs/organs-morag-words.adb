with Ada.Unchecked_Conversion;

package body Organs.Morag.Words is

   use type Interfaces.Unsigned_32;
   use type Interfaces.Unsigned_64;

   function To_Lead is new Ada.Unchecked_Conversion (Lead_Bytes, Term_Lead);
   function To_Bytes is new Ada.Unchecked_Conversion (Term_Lead, Lead_Bytes);
   function To_Prefix is new Ada.Unchecked_Conversion
     (Prefix_Text, Word_Prefix);

   function Table_Slots (Bytes : Natural) return Positive is
      Slots : Positive := 16;
   begin
      while Slots < 2 * Most_Words (Bytes) loop
         Slots := 2 * Slots;
      end loop;
      return Slots;
   end Table_Slots;

   --  The prefix of Text (First .. Last), folded
   function Prefix_Of (Text : String; First, Last : Positive)
     return Word_Prefix
   is
      Padded : Prefix_Text := [others => ASCII.NUL];
   begin
      for Offset in 0 .. Natural'Min (Last - First + 1, Prefix_Bytes) - 1 loop
         Padded (1 + Offset) := Word_Fold (Text (First + Offset));
      end loop;
      return To_Prefix (Padded);
   end Prefix_Of;

   procedure Collect (Text : String; Set : out Word_Set) is
      --  Every index below stays within its array: Text's by the loops' own
      --  tests (At_Byte <= Text'Last, a word within the bytes scanned),
      --  the words' by Most >= Most_Words (Text'Length) (the precondition,
      --  which the shipped build checks), the table's by the mask (Slots a
      --  power of two); the checks cost more than the scan, a third of a
      --  relevance turn's own work
      pragma Suppress (Index_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
      Mask : constant Word_Key := Word_Key (Set.Slots - 1);

      --  Whether Text (First .. Last) and the Known-th word fold alike
      function Spells (First, Last : Positive; Known : Positive)
        return Boolean is
        (Last - First = Set.Last (Known) - Set.First (Known)
         and then (for all Offset in 0 .. Last - First =>
                     Word_Fold (Text (First + Offset))
                     = Word_Fold (Text (Set.First (Known) + Offset))));

      --  Count Text (First .. Last), of Hash, among the words
      procedure Add (First, Last : Positive; Hash : Fnv_Hash.Hash) is
         Key  : constant Word_Key := Key_Of (Hash);
         Slot : Positive := Natural (Key and Mask) + 1;
         Word : Natural;
      begin
         loop
            Word := Set.Table (Slot);
            exit when Word = 0
              or else (Set.Key (Word) = Key and then Spells (First, Last, Word));
            Slot := Natural (Word_Key (Slot) and Mask) + 1;
         end loop;
         if Word = 0 then
            Set.Distinct := Set.Distinct + 1;
            Word := Set.Distinct;
            Set.Table (Slot) := Word;
            Set.Key (Word) := Key;
            Set.Prefix (Word) := Prefix_Of (Text, First, Last);
            Set.First (Word) := First;
            Set.Last (Word) := Last;
            Set.Times (Word) := 1;
         else
            Set.Times (Word) := Set.Times (Word) + 1;
         end if;
         Set.Total := Set.Total + 1;
      end Add;

      At_Byte : Positive := Text'First;
      First   : Positive;
      Hash    : Fnv_Hash.Hash;
      Folded  : Character;
   begin
      Set.Table := [others => 0];
      Set.Distinct := 0;
      Set.Total := 0;
      while At_Byte <= Text'Last loop
         Folded := Word_Fold (Text (At_Byte));
         if Folded = Not_A_Word then
            At_Byte := At_Byte + 1;
         else
            First := At_Byte;
            Hash := Fnv_Hash.Basis;
            loop
               Hash := Fnv_Hash.Step (Hash, Folded);
               exit when At_Byte = Text'Last;
               At_Byte := At_Byte + 1;
               Folded := Word_Fold (Text (At_Byte));
               exit when Folded = Not_A_Word;
            end loop;
            --  At_Byte is the word's last byte, or the one that ends it
            declare
               Last : constant Positive :=
                 (if Folded = Not_A_Word then At_Byte - 1 else At_Byte);
            begin
               if Last - First + 1 >= Min_Word then
                  Add (First, Last, Hash);
               end if;
               At_Byte := Last + 1;
            end;
         end if;
      end loop;
   end Collect;

   function Find
     (Set     : Word_Set;
      Text    : String;
      Lead    : Term_Lead;
      Index   : String;
      At_Byte : Positive) return Natural
   is
      Mask : constant Word_Key := Word_Key (Set.Slots - 1);
      Slot : Positive := Natural (Lead.Key and Mask) + 1;
      Word : Natural;
      Rest : constant Positive := At_Byte + Term_Lead_Bytes - Prefix_Bytes;
      --  Index (Rest + Offset) is the word's byte Offset past its prefix
   begin
      loop
         Word := Set.Table (Slot);
         exit when Word = 0;
         if Set.Key (Word) = Lead.Key
           and then Set.Prefix (Word) = Lead.Prefix
           and then Set.Last (Word) - Set.First (Word) + 1
                    = Natural (Lead.Size)
           and then
             (for all Offset in Prefix_Bytes .. Natural (Lead.Size) - 1 =>
                Word_Fold (Text (Set.First (Word) + Offset))
                = Index (Rest + Offset))
         then
            return Word;
         end if;
         Slot := Natural (Word_Key (Slot) and Mask) + 1;
      end loop;
      return 0;
   end Find;

   function Lead_At (Index : String; At_Byte : Positive) return Term_Lead
   is (To_Lead (Index (At_Byte .. At_Byte + Term_Lead_Bytes - 1)));

   function Added
     (Index : String; Keeping : Natural; Text : String) return String
   is
      Set : Word_Set (Most_Words (Text'Length), Table_Slots (Text'Length));
   begin
      Collect (Text, Set);
      declare
         New_Bytes : Natural := 0;
         --  What Text's words add at most: each a posting, and the lead
         --  and spelling of a word the index lacks
      begin
         for Word in 1 .. Set.Distinct loop
            New_Bytes := New_Bytes + Term_Lead_Bytes + Posting_Bytes
              + Natural'Max (0, Set.Last (Word) - Set.First (Word) + 1
                                - Prefix_Bytes);
         end loop;
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
               Put (Set.Times (Word) - 1);
            end Put_Newest;

            At_Byte : Positive := First_Term (Index);
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
                  Lead  : constant Term_Lead := Lead_At (Index, At_Byte);
                  Word  : constant Natural :=
                    Find (Set, Text, Lead, Index, At_Byte);
                  First : constant Positive := Postings_At (Lead, At_Byte);
                  Kept  : Natural := Natural (Lead.Postings);
                  --  The postings that stay: those of an age below
                  --  Keeping, which come first (newest first)
               begin
                  while Kept > 0
                    and then Age_At (Index, First + Posting_Bytes * (Kept - 1))
                             >= Keeping
                  loop
                     Kept := Kept - 1;
                  end loop;
                  if Kept > 0 or else Word /= 0 then
                     Put ((Lead with delta Postings => Interfaces.Unsigned_16
                             (Kept + Boolean'Pos (Word /= 0))));
                     Result (Last + 1 .. Last + Rest_Bytes (Lead)) :=
                       Index (At_Byte + Term_Lead_Bytes .. First - 1);
                     Last := Last + Rest_Bytes (Lead);
                     if Word /= 0 then
                        Put_Newest (Word);
                        Matched (Word) := True;
                     end if;
                     Result (Last + 1 .. Last + Posting_Bytes * Kept) :=
                       Index (First .. First - 1 + Posting_Bytes * Kept);
                     Last := Last + Posting_Bytes * Kept;
                  end if;
                  At_Byte := Next_Term (Lead, At_Byte);
               end;
            end loop;
            for Word in 1 .. Set.Distinct loop
               if not Matched (Word) then
                  Put (Term_Lead'
                         (Postings => 1,
                          Size     => Interfaces.Unsigned_16
                            (Set.Last (Word) - Set.First (Word) + 1),
                          Key      => Set.Key (Word),
                          Prefix   => Set.Prefix (Word)));
                  for Byte in Set.First (Word) + Prefix_Bytes
                              .. Set.Last (Word)
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
