--  The bytes of a JSON text tested many at once for one that ends a plain
--  run inside a string: a quote, a backslash or a control character.  The
--  bit tricks of "has a zero byte" and "has a byte less than n" answer
--  exactly whether such a byte is among eight, whatever the byte order; the
--  writer's escaper and the reader's string scan pass clean text with them.
--  Is_Plain tests a whole text, sixteen bytes an instruction: its body is
--  compiled with the vectorizer (see mafiabot_core.gpr).

private with Ada.Unchecked_Conversion;

package Json_Bytes is

   subtype Eight_Bytes is String (1 .. 8);

   function Is_Plain_Run (Bytes : Eight_Bytes) return Boolean;
   --  No quote, no backslash and no byte below 16#20# among Bytes

   function Is_Plain_Ascii_Run (Bytes : Eight_Bytes) return Boolean;
   --  Is_Plain_Run, and every byte ASCII: eight whole characters

   function Is_Plain (Text : String) return Boolean;
   --  No quote, no backslash and no byte below 16#20# in Text

private

   type Word is mod 2**64;
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

   function Is_Plain_Ascii_Run (Bytes : Eight_Bytes) return Boolean is
     ((To_Word (Bytes) and Highs) = 0 and then Is_Plain_Run (Bytes));

end Json_Bytes;
