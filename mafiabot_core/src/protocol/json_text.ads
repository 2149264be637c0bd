--  A compact JSON writer.  Every byte the body sends is built here, not by
--  GNATCOLL.JSON: its writer prints 1.5 as 1.50000000000000E+00 and 1e400 as
--  invalid JSON, and re-serializing would lose ids echoed as raw text.
--
--  A Builder writes into one heap buffer that grows by doubling and is kept
--  across Reset, so a long-lived builder allocates nothing per message once
--  it has seen its largest one.  Strings are written as UTF-8 with only the
--  escapes JSON requires; callers hand in text that the input guard has
--  already found to be valid UTF-8.
--
--  A builder Inside_String writes its document already quoted, as the inside
--  of a JSON string ({\"a\":1} for {"a":1}).  A turn's reply carries its
--  trace twice, as structuredContent and as JSON text in a text block: the
--  whole reply is one template (see Templates), the quoted copy written
--  Inside_String into the text block's text (Document_Part), so a turn
--  copies each value twice rather than escaping the first copy byte by
--  byte.  What the values are, and in what order they fill the holes, is
--  Turn_Tool's one table of the result's members.

private with Ada.Finalization;
with Json_Bytes;
with Thousandths;

package Json_Text is

   subtype Millis is Thousandths.Count;

   type Builder (Inside_String : Boolean := False) is
     tagged limited private
   with Type_Invariant => Is_Sound (Builder);
   --  One JSON document being written, compact, in call order

   function Is_Sound (Self : Builder) return Boolean;
   --  The document lies within the buffer, the buffer is Capacity bytes
   --  from 1 (none while Capacity is 0), and while a template is being
   --  filled the hole to fill next (a Positive) is one of its holes.  What
   --  the copies of the body stand on where they leave out their index
   --  checks: checked wherever a Builder leaves this package in the checked
   --  build, and kept, in every build, by this package's own writers of
   --  those fields, never by a caller's precondition.

   procedure Reset (Self : in out Builder);
   --  Start a new document, keeping the buffer

   procedure Start_Object (Self : in out Builder);
   procedure End_Object (Self : in out Builder);
   procedure Start_Array (Self : in out Builder);
   procedure End_Array (Self : in out Builder);

   function Is_Plain (Name : String) return Boolean
     renames Json_Bytes.Is_Plain;

   procedure Key (Self : in out Builder; Name : String)
   with Pre => Is_Plain (Name);
   --  Begin a member of the enclosing object; its value comes next.  Member
   --  names are the body's own words, written as they are.

   procedure Text (Self : in out Builder; Value : String);
   procedure Int (Self : in out Builder; Value : Long_Long_Integer);
   procedure Bool (Self : in out Builder; Value : Boolean);
   procedure Raw (Self : in out Builder; Json : String);
   --  A value that is already JSON text (an id echoed as it was sent)
   procedure Raw_Document (Self : in out Builder; Other : Builder)
   with Pre => Length (Other) > 0
               and then (Self.Inside_String or else not Other.Inside_String);
   --  The document Other holds, as a value

   procedure Start_Text (Self : in out Builder);
   procedure Text_Part (Self : in out Builder; Value : String);
   procedure End_Text (Self : in out Builder);
   --  A string value written in parts: Start_Text, any number of parts
   --  (texts, text holes, or a quoted document with its holes, see
   --  Document_Part), End_Text

   procedure Text_Field (Self : in out Builder; Name, Value : String);
   procedure Int_Field
     (Self : in out Builder; Name : String; Value : Long_Long_Integer);
   procedure Bool_Field (Self : in out Builder; Name : String; Value : Boolean);
   procedure Raw_Field (Self : in out Builder; Name, Json : String);

   procedure End_Line (Self : in out Builder)
   with Pre => not Self.Inside_String;
   --  Append the LF that ends a protocol message

   function Length (Self : Builder) return Natural;

   procedure Query
     (Self : Builder; Process : not null access procedure (Text : String));
   --  Call Process with the document written so far, without copying it

   function Image (Self : Builder) return String;
   --  A copy of the document written so far

   --  Templates.  A turn's result has the same members, names and steps on
   --  every turn of one shape; only some thirty values change.  Such a
   --  document is written once with holes where its values go, cut into a
   --  template, then filled in: a fill copies the text between two holes
   --  at once, in the form of the builder the template was written with.

   type Hole_Kind is (Text_Hole, Number_Hole, Raw_Hole);
   --  Where a string goes, a number, or any JSON value written as given
   --  (an id echoed as it was sent)

   Max_Holes : constant := 128;

   function Hole_Count (Self : Builder) return Natural;
   --  Holes written since the last Reset

   procedure Hole (Self : in out Builder; Kind : Hole_Kind)
   with Pre  => Hole_Count (Self) < Max_Holes and then not Is_Filling (Self)
                and then (if Is_In_Text (Self) then Kind = Text_Hole),
        Post => Hole_Count (Self) = Hole_Count (Self)'Old + 1;
   --  A value left to fill in: a string (its quotes written, its text left
   --  out), a number or a raw value.  Within a text (Start_Text), a text
   --  hole is a part of that text left to fill in.  A raw value goes in as
   --  it is given into a plain builder, and quoted once into a builder
   --  Inside_String (JSON text within a string, as the rest of its
   --  document).

   procedure Document_Part (Self : in out Builder; Other : Builder)
   with Pre  => not Self.Inside_String and then Other.Inside_String
                and then Is_In_Text (Self) and then not Is_Filling (Self)
                and then Length (Other) > 0
                and then Hole_Count (Self) + Hole_Count (Other) <= Max_Holes,
        Post => Hole_Count (Self) = Hole_Count (Self)'Old + Hole_Count (Other);
   --  Other's document, written Inside_String, as characters of the text
   --  being written, holes and all: a text hole of Other is filled escaped
   --  as Other's texts are, once more than Self's

   type Template is private;
   --  A document cut at its holes; it lives until freed

   No_Template : constant Template;

   function To_Template (Self : Builder) return Template
   with Pre  => Length (Self) > 0 and then not Is_Filling (Self),
        Post => To_Template'Result /= No_Template;
   --  The document written so far, in Self's form

   procedure Free (Pattern : in out Template)
   with Post => Pattern = No_Template;

   function Is_Filling (Self : Builder) return Boolean;
   --  A template is being filled in and has holes left

   function Next_Hole (Self : Builder) return Hole_Kind
   with Pre => Is_Filling (Self);

   procedure Start_Filling (Self : in out Builder; Pattern : Template)
   with Pre => Pattern /= No_Template and then not Is_Filling (Self)
               and then not Is_In_Text (Self)
               and then Is_Inside_String (Pattern) = Self.Inside_String;
   --  Pattern as a value, up to its first hole

   function Is_Inside_String (Pattern : Template) return Boolean
   with Pre => Pattern /= No_Template;
   --  The form Pattern was written in

   function Is_In_Text (Self : Builder) return Boolean;
   --  Between Start_Text and End_Text

   function Holes_Left (Self : Builder) return Natural;
   --  The holes of the template being filled that are not filled yet

   procedure Fill_Text
     (Self : in out Builder; Value : String; Plain : Boolean)
   with Inline,
        Pre => Is_Filling (Self) and then Next_Hole (Self) = Text_Hole;
   --  The next hole, a text hole, filled with Value, then the template's
   --  text up to the hole after it (once the last hole is filled, the rest
   --  of the template, and Is_Filling is False).  Value is copied as it
   --  stands where the caller found it Plain (Json_Bytes.Is_Plain: nothing
   --  to escape, once or twice), else escaped as the hole was written
   --  (twice where it was written Inside_String, see Document_Part).

   type Text_Span is record
      First : Positive := 1;
      Last  : Natural := 0;
   end record;
   --  The bytes First .. Last of a text that holds many (empty by default)

   type Text_Spans is array (Positive range <>) of Text_Span;

   function Are_Text_Holes (Self : Builder; Count : Natural) return Boolean;
   --  A template is being filled and its next Count holes are text holes

   procedure Fill_Texts
     (Self : in out Builder; Bytes : String; Spans : Text_Spans;
      Plain : Boolean)
   with Pre => Are_Text_Holes (Self, Spans'Length);
   --  The next Spans'Length holes, text holes, each filled as Fill_Text
   --  fills it with Bytes (Span.First .. Span.Last), Plain telling for all
   --  of Bytes: one call for a run of holes (a trace's steps) rather than
   --  one a hole.  A span that is not empty lies within Bytes (a slice
   --  checked in every build).

   procedure Fill_Fraction (Self : in out Builder; Value : Millis)
   with Pre => Is_Filling (Self) and then Next_Hole (Self) = Number_Hole;
   --  The next hole, a number hole, filled with Value / 1000 as a JSON
   --  number with at most three decimals (0.875, 1.0), as Fill_Text

   procedure Fill_Count (Self : in out Builder; Value : Natural)
   with Pre => Is_Filling (Self) and then Next_Hole (Self) = Number_Hole;
   --  The next hole, a number hole, filled with Value in decimal, as
   --  Fill_Text.  A number hole is filled by these two alone: it takes a
   --  number, never a text.

   procedure Fill_Raw (Self : in out Builder; Json : String)
   with Pre => Is_Filling (Self) and then Next_Hole (Self) = Raw_Hole;
   --  The next hole's value, JSON text (quoted once where the hole was
   --  written Inside_String), then the template's text up to the hole
   --  after it, as Fill_Text

   procedure Fill_Raw (Self : in out Builder; Json, Quoted_Json : String)
   with Pre => Is_Filling (Self) and then Next_Hole (Self) = Raw_Hole;
   --  As Fill_Raw (Json), given Json quoted once as well (Quoted (Json)
   --  without its outer quotes), which goes in where the hole was written
   --  Inside_String: for a value its writer spells in both forms at once,
   --  cheaper than escaping it here byte by byte

   function Quoted (Value : String) return String;
   --  Value as a JSON string literal, quotes included

   Nesting_Overflow : exception;
   --  A document nested deeper than the writer tracks: a bug in the caller

private

   Max_Nesting : constant := 32;

   type Comma_Flags is array (1 .. Max_Nesting) of Boolean;

   type Text_Access is access String;

   type Hole_Mark is record
      Position : Natural := 0;
      --  The hole's value goes after Data (Position)
      Kind     : Hole_Kind := Text_Hole;
      Twice    : Boolean := False;
      --  A text goes in quoted once more than a plain builder's: the hole
      --  was written Inside_String
   end record;

   type Hole_Marks is array (1 .. Max_Holes) of Hole_Mark;

   type Text_Array is array (Natural range <>) of Text_Access;

   type Hole_Kinds is array (Positive range <>) of Hole_Kind;

   type Hole_Flags is array (Positive range <>) of Boolean;

   type Template_Text (Holes : Natural) is record
      Segments      : Text_Array (0 .. Holes);
      --  The text before the first hole, then after each hole: first, at
      --  an offset that does not depend on Holes, for every fill reads it
      Inside_String : Boolean;
      Kinds         : Hole_Kinds (1 .. Holes);
      Twice         : Hole_Flags (1 .. Holes);
      --  Each hole's Hole_Mark.Twice
   end record;

   type Template is access Template_Text;

   No_Template : constant Template := null;

   type Builder (Inside_String : Boolean := False) is
     new Ada.Finalization.Limited_Controlled with record
      Data      : Text_Access;
      Capacity  : Natural := 0;
      --  Data'Length, or 0 before Data is first allocated
      Last      : Natural := 0;
      --  Data (1 .. Last) is the document
      Level     : Natural range 0 .. Max_Nesting := 0;
      Has_Items : Comma_Flags := [others => False];
      After_Key : Boolean := False;
      In_Text   : Boolean := False;
      Holes     : Hole_Marks;
      Hole_Last : Natural range 0 .. Max_Holes := 0;
      --  Holes (1 .. Hole_Last) are the holes written since Reset
      Pattern   : Template := No_Template;
      Next      : Positive := 1;
      --  Filling Pattern, until its last hole is filled: Next is the hole
      --  to fill next
   end record;

   overriding procedure Finalize (Self : in out Builder);

   function Is_Sound (Self : Builder) return Boolean is
     (Self.Last <= Self.Capacity
      and then (if Self.Data = null then Self.Capacity = 0
                else Self.Data'First = 1 and then Self.Data'Last = Self.Capacity)
      and then (Self.Pattern = null
                or else Self.Next <= Self.Pattern.Holes));

   function Hole_Count (Self : Builder) return Natural is (Self.Hole_Last);

   function Is_Filling (Self : Builder) return Boolean is
     (Self.Pattern /= null);

   function Next_Hole (Self : Builder) return Hole_Kind is
     (Self.Pattern.Kinds (Self.Next));

   function Holes_Left (Self : Builder) return Natural is
     (if Self.Pattern = null then 0 else Self.Pattern.Holes - Self.Next + 1);


   function Are_Text_Holes (Self : Builder; Count : Natural) return Boolean
   is (Count = 0
       or else (Self.Pattern /= null
                and then Count <= Self.Pattern.Holes - Self.Next + 1
                and then (for all K in Self.Next .. Self.Next + Count - 1 =>
                            Self.Pattern.Kinds (K) = Text_Hole)));

   function Is_Inside_String (Pattern : Template) return Boolean is
     (Pattern.Inside_String);

   function Is_In_Text (Self : Builder) return Boolean is (Self.In_Text);

end Json_Text;
