--  The bytes of a JSON text tested many at once for one that ends a plain
--  run inside a string: a quote, a backslash or a control character.  The
--  bit tricks of "has a zero byte" and "has a byte less than n" answer
--  exactly whether such a byte is among eight, whatever the byte order; the
--  writer's escaper and the reader's string scan pass clean text with them.
--  Is_Plain tests a whole text, sixteen bytes an instruction: its body is
--  compiled with the vectorizer (see mafiabot_core.gpr).
--
--  The visible part is in the SPARK subset, for Input_Guard calls it: each
--  function has no state and the two the guard relies on say what they
--  answer in a postcondition; how they answer it is not for the prover.

private with Ada.Unchecked_Conversion;
private with System;

package Json_Bytes with SPARK_Mode => On is

   subtype Eight_Bytes is String (1 .. 8);

   function Is_Plain_Run (Bytes : Eight_Bytes) return Boolean
   with Global => null;
   --  No quote, no backslash and no byte below 16#20# among Bytes

   function Is_Ascii_Run (Bytes : Eight_Bytes) return Boolean
   with
     Global => null,
     Post   => Is_Ascii_Run'Result
               = (for all C of Bytes => Character'Pos (C) < 16#80#);
   --  Every byte of Bytes below 16#80#: eight whole UTF-8 characters

   function Is_Plain_Ascii_Run (Bytes : Eight_Bytes) return Boolean
   with
     Global => null,
     Post   => Is_Plain_Ascii_Run'Result
               = (for all C of Bytes =>
                    Character'Pos (C) in 16#20# .. 16#7F#
                    and then C not in '"' | '\');
   --  Is_Plain_Run, and every byte ASCII: eight whole characters

   subtype Run_Length is Natural range 0 .. 8;

   function Plain_Ascii_Prefix (Bytes : Eight_Bytes) return Run_Length
   with Global => null;
   --  How many of Bytes, from the first, are plain ASCII: the place of the
   --  first quote, backslash, control or non-ASCII byte, found without a
   --  loop (8 when there is none)

   function Is_Plain (Text : String) return Boolean
   with Global => null;
   --  No quote, no backslash and no byte below 16#20# in Text

private
   pragma SPARK_Mode (Off);
   --  Bit tricks over a word read through an unchecked conversion: outside
   --  the subset, and stated for the prover by the postconditions above

   type Word is mod 2**64;

   use type System.Bit_Order;
   pragma Compile_Time_Error
     (System.Default_Bit_Order /= System.Low_Order_First,
      "Plain_Ascii_Prefix reads the first byte as a word's lowest");
   function To_Word is new Ada.Unchecked_Conversion (Eight_Bytes, Word);

   Ones  : constant Word := 16#0101_0101_0101_0101#;
   Highs : constant Word := 16#8080_8080_8080_8080#;

   function Has_Byte_Below (X : Word; Bound : Word) return Boolean is
     (((X - Ones * Bound) and not X and Highs) /= 0)
   with Pre => Bound <= 128;

   function Has_Byte (X : Word; C : Character) return Boolean is
     (Has_Byte_Below (X xor (Ones * Character'Pos (C)), 1));

   function Is_Plain_Run (Bytes : Eight_Bytes) return Boolean is
     (not (Has_Byte_Below (To_Word (Bytes), 16#20#)
           or else Has_Byte (To_Word (Bytes), '"')
           or else Has_Byte (To_Word (Bytes), '\')));

   function Is_Ascii_Run (Bytes : Eight_Bytes) return Boolean is
     ((To_Word (Bytes) and Highs) = 0);

   function Is_Plain_Ascii_Run (Bytes : Eight_Bytes) return Boolean is
     (Is_Ascii_Run (Bytes) and then Is_Plain_Run (Bytes));

   --  The high bit of each byte of X that ends a plain ASCII run.  Above
   --  the lowest, a mark may be false (a borrow runs on from a marked
   --  byte); the lowest is always true, and only it is read.
   function Run_Ends (X : Word) return Word is
     ((((X - Ones * 16#20#) and not X)
       or ((X xor (Ones * Character'Pos ('"'))) - Ones)
       or ((X xor (Ones * Character'Pos ('\'))) - Ones)
       or X) and Highs);

   --  The lowest mark's byte: isolated, moved to bit 0 of its byte, it
   --  multiplies a word whose byte K holds 7 - K into one whose top byte
   --  holds the mark's place.
   function Plain_Ascii_Prefix (Bytes : Eight_Bytes) return Run_Length is
     (declare
        Ends : constant Word := Run_Ends (To_Word (Bytes));
      begin
        (if Ends = 0 then 8
         else Run_Length
                ((((Ends and (not Ends + 1)) / 2**7)
                  * 16#0001_0203_0405_0607#) / 2**56)));

end Json_Bytes;
