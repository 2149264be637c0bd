--  A compact JSON writer.  Every byte the body sends is built here, not by
--  GNATCOLL.JSON: its writer prints 1.5 as 1.50000000000000E+00 and 1e400 as
--  invalid JSON, and re-serializing would lose ids echoed as raw text.
--
--  Strings are written as UTF-8 with only the escapes JSON requires; callers
--  hand in text that the input guard has already found to be valid UTF-8.

with Ada.Strings.Unbounded;

package Json_Text is

   subtype Millis is Natural range 0 .. 1000;

   type Builder is tagged limited private;
   --  One JSON document being written, compact, in call order

   procedure Start_Object (Self : in out Builder);
   procedure End_Object (Self : in out Builder);
   procedure Start_Array (Self : in out Builder);
   procedure End_Array (Self : in out Builder);

   procedure Key (Self : in out Builder; Name : String);
   --  Begin a member of the enclosing object; its value comes next

   procedure Text (Self : in out Builder; Value : String);
   procedure Int (Self : in out Builder; Value : Long_Long_Integer);
   procedure Bool (Self : in out Builder; Value : Boolean);
   procedure Null_Value (Self : in out Builder);
   procedure Fraction (Self : in out Builder; Value : Millis);
   --  Value / 1000 as a JSON number with at most three decimals: 0.875, 1.0
   procedure Raw (Self : in out Builder; Json : String);
   --  A value that is already JSON text (an id echoed as it was sent)

   procedure Text_Field (Self : in out Builder; Name, Value : String);
   procedure Int_Field
     (Self : in out Builder; Name : String; Value : Long_Long_Integer);
   procedure Bool_Field (Self : in out Builder; Name : String; Value : Boolean);
   procedure Raw_Field (Self : in out Builder; Name, Json : String);

   function Image (Self : Builder) return String;
   --  The document written so far

   procedure Move_To
     (Self : in out Builder;
      Target : out Ada.Strings.Unbounded.Unbounded_String);
   --  Hand the document over without copying it through the stack; Self is
   --  empty afterwards

   function Quoted (Value : String) return String;
   --  Value as a JSON string literal, quotes included

   function Fraction_Image (Value : Millis) return String;

   Nesting_Overflow : exception;
   --  A document nested deeper than the writer tracks: a bug in the caller

private

   Max_Nesting : constant := 32;

   type Comma_Flags is array (1 .. Max_Nesting) of Boolean;

   type Builder is tagged limited record
      Buffer    : Ada.Strings.Unbounded.Unbounded_String;
      Level     : Natural range 0 .. Max_Nesting := 0;
      Has_Items : Comma_Flags := [others => False];
      After_Key : Boolean := False;
   end record;

end Json_Text;
