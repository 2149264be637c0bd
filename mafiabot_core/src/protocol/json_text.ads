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
--  trace twice, as structuredContent and as JSON text in a text block; the
--  trace is cheaper to write twice than to escape a second time, byte by
--  byte, from the first copy.

private with Ada.Finalization;

package Json_Text is

   subtype Millis is Natural range 0 .. 1000;

   type Builder (Inside_String : Boolean := False) is
     tagged limited private;
   --  One JSON document being written, compact, in call order

   type Fragment is private;
   --  JSON text in both of a builder's forms, quoted once.  Its texts live
   --  as long as the program: fragments are made for constants.

   function To_Fragment (Json : String) return Fragment
   with Pre => (for all C of Json => C >= ' ');
   --  Json: a value, or members ("a":1,"b":2), already written as JSON text
   --  (which never holds a raw control character)

   procedure Reset (Self : in out Builder);
   --  Start a new document, keeping the buffer

   procedure Start_Object (Self : in out Builder);
   procedure End_Object (Self : in out Builder);
   procedure Start_Array (Self : in out Builder);
   procedure End_Array (Self : in out Builder);

   function Is_Plain (Name : String) return Boolean is
     (for all C of Name => C >= ' ' and then C not in '"' | '\');

   procedure Key (Self : in out Builder; Name : String)
   with Pre => Is_Plain (Name);
   --  Begin a member of the enclosing object; its value comes next.  Member
   --  names are the body's own words, written as they are.

   type Member_Name is private;
   --  A member name in both of a builder's forms, spelled once: the names
   --  of a turn's result are written some fifty times a turn

   function To_Member_Name (Name : String) return Member_Name
   with Pre => Is_Plain (Name);

   procedure Key (Self : in out Builder; Name : Member_Name);

   type Object_Head is private;
   --  The start of an object up to the name of its last member, in both
   --  forms: {"a":1,"b": (see Object)

   function To_Object_Head (Members, Next_Name : String) return Object_Head
   with Pre => Members'Length > 0 and then Is_Plain (Next_Name)
               and then (for all C of Members => C >= ' ');
   --  Members: the object's first members as JSON text ("a":1)

   procedure Text (Self : in out Builder; Value : String);
   procedure Int (Self : in out Builder; Value : Long_Long_Integer);
   procedure Bool (Self : in out Builder; Value : Boolean);
   procedure Fraction (Self : in out Builder; Value : Millis);
   --  Value / 1000 as a JSON number with at most three decimals: 0.875, 1.0
   procedure Raw (Self : in out Builder; Json : String);
   --  A value that is already JSON text (an id echoed as it was sent)
   procedure Raw (Self : in out Builder; Part : Fragment);
   --  The same, with nothing left to escape
   procedure Raw_Document (Self : in out Builder; Other : Builder)
   with Pre => Length (Other) > 0
               and then (Self.Inside_String or else not Other.Inside_String);
   --  The document Other holds, as a value

   type Text_Store (Capacity : Natural) is limited private;
   --  Texts kept back to back to be written later, some of them many times.
   --  Each is tested once, when it is kept, for a byte a JSON string must
   --  escape: a builder copies a clean one as it stands, in either form.

   type Stored_Text is private;
   --  One text of a store (empty by default)

   procedure Clear (Store : in out Text_Store);
   --  Forget every text: parts kept before are no longer the store's

   function Room (Store : Text_Store) return Natural;
   --  How many more bytes the store can keep

   procedure Keep
     (Store : in out Text_Store; Value : String; Part : out Stored_Text)
   with Pre  => Value'Length <= Room (Store),
        Post => Room (Store) = Room (Store)'Old - Value'Length
                and then Is_Kept (Store, Part);

   function Is_Kept (Store : Text_Store; Part : Stored_Text) return Boolean;
   --  Part is one of Store's texts since it was last cleared (or empty)

   function Is_Empty (Part : Stored_Text) return Boolean;

   function Text_Of (Store : Text_Store; Part : Stored_Text) return String
   with Pre => Is_Kept (Store, Part);

   procedure Text
     (Self : in out Builder; Store : Text_Store; Part : Stored_Text)
   with Pre => Is_Kept (Store, Part);
   --  Text (Self, Text_Of (Store, Part)), without testing it again

   procedure Object
     (Self : in out Builder; Head : Object_Head; Store : Text_Store;
      Last : Stored_Text)
   with Pre => Is_Kept (Store, Last);
   --  A whole object at once: Start_Object (Head), Text (Store, Last),
   --  End_Object (a step of a turn's trace, written some forty times a turn)

   procedure Start_Text (Self : in out Builder);
   procedure Text_Part (Self : in out Builder; Value : String);
   procedure Text_Part
     (Self : in out Builder; Store : Text_Store; Part : Stored_Text)
   with Pre => Is_Kept (Store, Part);
   procedure Text_Part_Document (Self : in out Builder; Other : Builder);
   procedure End_Text (Self : in out Builder);
   --  A string value written in parts: Start_Text, any number of parts (the
   --  JSON text of Other's document, quoted as this builder's form needs:
   --  a document written Inside_String is already quoted once), End_Text

   procedure Text_Field (Self : in out Builder; Name, Value : String);
   procedure Int_Field
     (Self : in out Builder; Name : String; Value : Long_Long_Integer);
   procedure Bool_Field (Self : in out Builder; Name : String; Value : Boolean);
   procedure Raw_Field (Self : in out Builder; Name, Json : String);
   procedure Text_Field
     (Self : in out Builder; Name : Member_Name; Value : String);
   procedure Int_Field
     (Self : in out Builder; Name : Member_Name; Value : Long_Long_Integer);

   procedure End_Line (Self : in out Builder)
   with Pre => not Self.Inside_String;
   --  Append the LF that ends a protocol message

   function Length (Self : Builder) return Natural;

   procedure Query
     (Self : Builder; Process : not null access procedure (Text : String));
   --  Call Process with the document written so far, without copying it

   function Image (Self : Builder) return String;
   --  A copy of the document written so far

   function Quoted (Value : String) return String;
   --  Value as a JSON string literal, quotes included

   function Fraction_Image (Value : Millis) return String;

   Nesting_Overflow : exception;
   --  A document nested deeper than the writer tracks: a bug in the caller

private

   Max_Nesting : constant := 32;

   type Comma_Flags is array (1 .. Max_Nesting) of Boolean;

   type Text_Access is access String;

   type Constant_Text is access constant String;

   type Fragment is record
      Plain, Quoted : Constant_Text;
   end record;

   type Object_Head is new Fragment;

   type Member_Name is new Fragment;
   --  "name": and \"name\":

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
   end record;

   overriding procedure Finalize (Self : in out Builder);

   type Text_Store (Capacity : Natural) is limited record
      Data : String (1 .. Capacity);
      Last : Natural := 0;
      --  Data (1 .. Last) holds the texts kept since the last Clear
   end record;

   type Stored_Text is record
      First : Positive := 1;
      Last  : Natural := 0;
      Clean : Boolean := True;
      --  No byte of Data (First .. Last) needs an escape
   end record;

   function Room (Store : Text_Store) return Natural is
     (Store.Capacity - Store.Last);

   function Is_Kept (Store : Text_Store; Part : Stored_Text) return Boolean is
     (Part.Last < Part.First or else Part.Last <= Store.Last);

   function Is_Empty (Part : Stored_Text) return Boolean is
     (Part.Last < Part.First);

   function Text_Of (Store : Text_Store; Part : Stored_Text) return String is
     (Store.Data (Part.First .. Part.Last));

end Json_Text;
