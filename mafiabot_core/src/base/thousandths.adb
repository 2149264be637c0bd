package body Thousandths is

   function Spelled (Value : Count) return Image is
      function Digit (Of_Value : Natural) return Character is
        (Character'Val (Character'Pos ('0') + Of_Value mod 10));
      Result : Image :=
        (Text => "0." & Digit (Value / 100) & Digit (Value / 10)
                 & Digit (Value),
         Last => 5);
   begin
      if Value = Count'Last then
         return (Text => "1.0  ", Last => 3);
      end if;
      while Result.Last > 3 and then Result.Text (Result.Last) = '0' loop
         Result.Last := Result.Last - 1;
      end loop;
      return Result;
   end Spelled;

end Thousandths;
