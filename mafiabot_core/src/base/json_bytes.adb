with Interfaces;

package body Json_Bytes with SPARK_Mode => Off is

   function Is_Plain (Text : String) return Boolean is
      use type Interfaces.Unsigned_8;
      type Byte_Array is array (Text'Range) of Interfaces.Unsigned_8;
      Bytes : constant Byte_Array with Import, Address => Text'Address;
      Marks : Interfaces.Unsigned_8 := 0;
   begin
      --  No early exit and no short circuit: a loop the vectorizer turns
      --  into sixteen bytes a step.  Texts here are short and nearly always
      --  plain, so reading the rest of one after an escape costs nothing.
      for Byte of Bytes loop
         Marks := Marks
           or (if Byte < 16#20# or Byte = Character'Pos ('"')
                 or Byte = Character'Pos ('\') then 1 else 0);
      end loop;
      return Marks = 0;
   end Is_Plain;

end Json_Bytes;
