with Ada.Unchecked_Conversion;

package body Organs.Morag.Words is

   use type Fnv_Hash.Hash;

   procedure Next_Word
     (Text  : String;
      Index : in out Positive;
      First : out Positive;
      Last  : out Natural;
      Hash  : out Fnv_Hash.Hash;
      Found : out Boolean) is
   begin
      Found := False;
      First := Index;
      Last := 0;
      Hash := Fnv_Hash.Basis;
      while Index <= Text'Last loop
         if Word_Fold (Text (Index)) /= Not_A_Word then
            First := Index;
            Hash := Fnv_Hash.Basis;
            while Index <= Text'Last
              and then Word_Fold (Text (Index)) /= Not_A_Word
            loop
               Hash := Fnv_Hash.Step (Hash, Word_Fold (Text (Index)));
               Index := Index + 1;
            end loop;
            if Index - First >= Min_Word then
               Last := Index - 1;
               Found := True;
               return;
            end if;
         else
            Index := Index + 1;
         end if;
      end loop;
   end Next_Word;

   function To_Lead is new Ada.Unchecked_Conversion (Lead_Bytes, Entry_Lead);
   function To_Bytes is new Ada.Unchecked_Conversion (Entry_Lead, Lead_Bytes);
   function To_Length is new Ada.Unchecked_Conversion
     (Frame, Interfaces.Unsigned_16);
   function To_Frame is new Ada.Unchecked_Conversion
     (Interfaces.Unsigned_16, Frame);
   function To_Prefix is new Ada.Unchecked_Conversion
     (Prefix_Text, Word_Prefix);

   function Prefix_Of (Word : String) return Word_Prefix is
      Kept   : constant Natural := Natural'Min (Word'Length, Prefix_Bytes);
      Padded : Prefix_Text := [others => ASCII.NUL];
   begin
      Padded (1 .. Kept) := Word (Word'First .. Word'First + Kept - 1);
      return To_Prefix (Padded);
   end Prefix_Of;

   function Table_Slots (Bytes : Natural) return Positive is
      Slots : Positive := 16;
   begin
      while Slots < 2 * Most_Words (Bytes) loop
         Slots := 2 * Slots;
      end loop;
      return Slots;
   end Table_Slots;

   function Index_Of (Text : String) return String is
      Most  : constant Positive := Most_Words (Text'Length);
      Slots : constant Positive := Table_Slots (Text'Length);

      Table : array (0 .. Slots - 1) of Natural := [others => 0];
      --  0: a free slot, else the distinct word whose hash leads there
      Word_Hash  : array (1 .. Most) of Fnv_Hash.Hash := [others => 0];
      Word_First : array (1 .. Most) of Positive;
      Word_Last  : array (1 .. Most) of Natural;
      Times      : array (1 .. Most) of Natural := [others => 0];
      Distinct   : Natural := 0;
      Bytes      : Natural := 0;

      --  Whether Text (First .. Last) and the Known-th word fold alike
      function Spells (First : Positive; Last : Natural; Known : Positive)
        return Boolean is
        (Last - First = Word_Last (Known) - Word_First (Known)
         and then (for all Offset in 0 .. Last - First =>
                     Word_Fold (Text (First + Offset))
                     = Word_Fold (Text (Word_First (Known) + Offset))));

      At_Byte : Positive := Text'First;
      First   : Positive;
      Last    : Natural;
      Hash    : Fnv_Hash.Hash;
      Found   : Boolean;
   begin
      loop
         Next_Word (Text, At_Byte, First, Last, Hash, Found);
         exit when not Found;
         declare
            Slot : Natural := Natural (Hash and Fnv_Hash.Hash (Slots - 1));
         begin
            while Table (Slot) /= 0
              and then (Word_Hash (Table (Slot)) /= Hash
                        or else not Spells (First, Last, Table (Slot)))
            loop
               Slot := (Slot + 1) mod Slots;
            end loop;
            if Table (Slot) = 0 then
               Distinct := Distinct + 1;
               Word_Hash (Distinct) := Hash;
               Word_First (Distinct) := First;
               Word_Last (Distinct) := Last;
               Table (Slot) := Distinct;
               Bytes := Bytes + Entry_Lead_Bytes
                 + Natural'Max (0, Last - First + 1 - Prefix_Bytes);
            end if;
            Times (Table (Slot)) := Times (Table (Slot)) + 1;
         end;
      end loop;
      return List : String (1 .. Bytes) do
         declare
            Next : Positive := 1;
         begin
            for Word in 1 .. Distinct loop
               declare
                  Size : constant Natural :=
                    Word_Last (Word) - Word_First (Word) + 1;
                  Spelling : String (1 .. Size);
                  Lead : Entry_Lead;
               begin
                  for Offset in 0 .. Size - 1 loop
                     Spelling (1 + Offset) :=
                       Word_Fold (Text (Word_First (Word) + Offset));
                  end loop;
                  Lead := (Times  => Interfaces.Unsigned_16 (Times (Word)),
                           Size   => Interfaces.Unsigned_16 (Size),
                           Key    => Key_Of (Word_Hash (Word)),
                           Prefix => Prefix_Of (Spelling));
                  List (Next .. Next + Entry_Lead_Bytes - 1) :=
                    To_Bytes (Lead);
                  Next := Next + Entry_Lead_Bytes;
                  List (Next .. Next + Rest_Bytes (Lead) - 1) :=
                    Spelling (Prefix_Bytes + 1 .. Size);
                  Next := Next + Rest_Bytes (Lead);
               end;
            end loop;
         end;
      end return;
   end Index_Of;

   function Framed (List : String) return String is
   begin
      return Result : String (1 .. Frame_Bytes + List'Length) do
         Result (1 .. Frame_Bytes) :=
           To_Frame (Interfaces.Unsigned_16 (List'Length));
         Result (Frame_Bytes + 1 .. Result'Last) := List;
      end return;
   end Framed;

   function Frame_Length (Lists : String; At_Byte : Positive) return Natural
   is (Natural (To_Length (Lists (At_Byte .. At_Byte + Frame_Bytes - 1))));

   function Lead_At (List : String; At_Byte : Positive) return Entry_Lead
   is (To_Lead (List (At_Byte .. At_Byte + Entry_Lead_Bytes - 1)));

end Organs.Morag.Words;
