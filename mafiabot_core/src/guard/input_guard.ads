--  The input guard: the lexical rules a protocol line is held to (well-formed
--  UTF-8, no control byte in a string, no lone surrogate escape, bounded
--  depth and element count).  Json_Reader holds every line to these rules
--  as it reads it; Inspect names the first one a refused line breaks, so
--  that its error says why, and the tests hold the reader to it.
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

end Input_Guard;
