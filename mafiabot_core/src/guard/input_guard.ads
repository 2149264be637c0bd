--  The input guard: a lexical pass over one protocol line before any JSON
--  parser sees it.  GNATCOLL.JSON silently corrupts invalid UTF-8 and lone
--  surrogate escapes, and recurses once per nesting level, so a line is only
--  handed to it once this package has found it Clean.
--
--  Written for the prover (docs/spark.md; gnatprove is not available here,
--  so the subset is kept by discipline and the contracts are checked at run
--  time with -gnata): no state (Global => null on every declaration), a
--  verdict instead of an exception, bounds in range subtypes.

package Input_Guard with SPARK_Mode => On is

   type Finding is
     (Clean,
      --  Nothing wrong at the lexical level (the parser may still refuse it)

      Invalid_Utf8,
      --  A byte sequence that is not well-formed UTF-8 (RFC 3629): stray
      --  continuation bytes, overlong forms, encoded surrogates, > U+10FFFF

      Control_In_String,
      --  A raw byte below 16#20# inside a string literal (JSON forbids it)

      Lone_Surrogate,
      --  A \uD800-\uDFFF escape that is not half of a proper pair: it would
      --  decode into bytes that are not UTF-8

      Too_Deep,
      --  More nested arrays/objects than the limit allows

      Too_Many_Elements);
      --  More structural elements than the limit allows

   subtype Rejection is Finding range Invalid_Utf8 .. Too_Many_Elements;

   type Limits is record
      Max_Depth    : Positive;
      --  Deepest nesting of [ and { accepted
      Max_Elements : Positive;
      --  Most opening brackets plus separating commas accepted
   end record;

   type Verdict is record
      Kind   : Finding := Clean;
      Offset : Natural := 0;
      --  Index in the line of the first offending byte; 0 when Clean
   end record;

   function Inspect (Line : String; Within : Limits) return Verdict
   with
     Global => null,
     Pre  => Line'Last < Integer'Last,
     Post =>
       (if Inspect'Result.Kind = Clean then Inspect'Result.Offset = 0
        else Inspect'Result.Offset in Line'Range);
   --  The first finding in Line, scanning left to right

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

   function Is_Valid_Utf8 (Text : String) return Boolean
   with Global => null, Pre => Text'Last < Integer'Last;
   --  Whether Text is well-formed UTF-8, by the same decoder Inspect uses

   function Utf8_Prefix_Length (Text : String; Max_Bytes : Natural)
     return Natural
   with
     Global => null,
     Pre    => Text'Last < Integer'Last,
     Post   => Utf8_Prefix_Length'Result <= Max_Bytes
             and then Utf8_Prefix_Length'Result <= Text'Length;
   --  The longest prefix of valid UTF-8 Text of at most Max_Bytes bytes that
   --  does not cut a character in two

end Input_Guard;
