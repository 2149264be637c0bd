--  UTF-8 as RFC 3629 defines it, decoded one sequence at a time: the one
--  decoder the input guard, the cuts of the cycle and the store's check of
--  a record's texts share, so that what one of them calls UTF-8 every
--  other does too.
--
--  Written for the prover (docs/spark.md), as Input_Guard is: no state,
--  no exceptions, bounds in range subtypes.

package Utf8 with SPARK_Mode => On is

   Max_Sequence_Bytes : constant := 4;
   --  The longest UTF-8 sequence (RFC 3629: U+10000 .. U+10FFFF)

   subtype Sequence_Size is Natural range 0 .. Max_Sequence_Bytes;
   --  A sequence's length, 0 for none

   function Sequence_Length (Text : String; From : Positive)
     return Sequence_Size
   with
     Global => null,
     Pre    => From in Text'Range and then Text'Last < Integer'Last,
     Post   => (if Sequence_Length'Result > 0 then
                  From + Sequence_Length'Result - 1 <= Text'Last);
   --  Length of the well-formed UTF-8 sequence starting at Text (From), or
   --  0 when none starts there (RFC 3629: no overlong forms, no encoded
   --  surrogates, nothing above U+10FFFF)

   function Is_Valid (Text : String) return Boolean
   with Global => null, Pre => Text'Last < Integer'Last;
   --  Whether Text is well-formed UTF-8: a sequence of whole sequences

   function Prefix_Length (Text : String; Max_Bytes : Natural)
     return Natural
   with
     Global => null,
     Pre    => Text'Last < Integer'Last,
     Post   => Prefix_Length'Result <= Max_Bytes
             and then Prefix_Length'Result <= Text'Length;
   --  The longest prefix of valid UTF-8 Text of at most Max_Bytes bytes that
   --  does not cut a character in two

end Utf8;
