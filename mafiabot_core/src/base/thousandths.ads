--  A count of thousandths spelled as a decimal fraction with at most three
--  decimals and at least one: 0.875, 0.05, 0.0, 1.0.  The one spelling of a
--  trace's fractions, in the details the cycle writes and in the numbers of
--  the JSON result alike (a JSON number as written).

package Thousandths with Pure is

   subtype Count is Natural range 0 .. 1000;

   subtype Image_Last is Positive range 3 .. 5;

   type Image is record
      Text : String (1 .. 5);
      Last : Image_Last;
      --  The spelling is Text (1 .. Last)
   end record;

   function Spelled (Value : Count) return Image;

end Thousandths;
