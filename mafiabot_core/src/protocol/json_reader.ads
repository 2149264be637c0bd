--  A strict RFC 8259 JSON reader for protocol lines, built for the hot path:
--  one pass, no recursion, no allocation per value.  A Document records
--  each value as a node (kind, span in the line, links to its first child
--  and next sibling) in one array that is reused from line to line; strings
--  are decoded only when asked for, and any value can be read back as the
--  exact text it was sent as (request ids are echoed byte for byte).
--
--  The reader holds each line to the input guard's rules as it reads it
--  (well-formed UTF-8 in strings, no lone surrogate escapes, bounded depth
--  and element count), so decoding never produces invalid UTF-8 and a line
--  is read once, not guarded and then parsed.  GNATCOLL.JSON stays the
--  reference: the tests hold this reader to it (what this reader accepts,
--  GNATCOLL.JSON accepts with equal values) and to Input_Guard.Inspect.

private with Ada.Finalization;
with Input_Guard;

package Json_Reader is

   type Value_Kind is
     (Null_Value, True_Value, False_Value, Number_Value, String_Value,
      Array_Value, Object_Value);

   type Node_Id is new Natural;
   No_Node : constant Node_Id := 0;

   type Document is tagged limited private;

   procedure Parse
     (Self : in out Document; Line : String; Within : Input_Guard.Limits);
   --  Read Line as one JSON text (whitespace around it allowed).  Afterwards
   --  either Is_Valid, or Error_Message and Error_Column say why not.  Nodes
   --  refer into Line by position: the functions that read text back take
   --  the same Line again.
   --
   --  A line found valid is one Input_Guard.Inspect (Line, Within) finds
   --  Clean (the tests hold the two to it).  A line refused may break the
   --  grammar, a guard rule or both, and the reader stops at the first
   --  fault it meets: a caller that reports guard findings before grammar
   --  errors asks Inspect about a refused line.

   function Is_Line_Of (Self : Document; Line : String) return Boolean;
   --  Whether Line has the bounds of the line last parsed

   function Is_Valid (Self : Document) return Boolean;
   function Error_Message (Self : Document) return String
   with Pre => not Is_Valid (Self);
   function Error_Column (Self : Document) return Positive
   with Pre => not Is_Valid (Self);
   --  Counted in bytes from 1 at the line's start

   function Root (Self : Document) return Node_Id
   with Pre => Is_Valid (Self);

   function Kind (Self : Document; Node : Node_Id) return Value_Kind
   with Inline, Pre => Node /= No_Node;
   --  Inline: a request asks it a dozen times

   function Member
     (Self : Document; Line : String; Object : Node_Id; Name : String)
      return Node_Id
   with Pre => Is_Line_Of (Self, Line)
               and then Kind (Self, Object) = Object_Value;
   --  The value of Object's member Name, No_Node if it has none; of
   --  duplicate members the last wins, as in GNATCOLL.JSON

   function First_Child (Self : Document; Node : Node_Id) return Node_Id
   with Pre => Kind (Self, Node) in Array_Value | Object_Value;
   function Next_Sibling (Self : Document; Node : Node_Id) return Node_Id;
   --  Iteration over an array's elements or an object's member values

   function Key (Self : Document; Line : String; Node : Node_Id)
     return String
   with Pre => Is_Line_Of (Self, Line);
   --  The decoded member name of a member value

   type Member_Name is not null access constant String;
   type Name_List is array (Positive range <>) of Member_Name;

   function Key_Index
     (Self : Document; Line : String; Node : Node_Id; Names : Name_List)
      return Natural
   with Pre  => Is_Line_Of (Self, Line),
        Post => Key_Index'Result = 0 or else Key_Index'Result in Names'Range;
   --  The place in Names of the member name of a member value (Key (Self,
   --  Line, Node) = Names (Place).all, compared without a copy of the key
   --  when it holds no escape), the first if Names holds it twice; 0 for a
   --  name not in Names

   type Name_Set (First : Positive; Last : Natural) is private;
   --  The names of a Name_List, in its places First .. Last, with what a
   --  walk over an object's members compares them by: made once (where the
   --  names are declared), so that a lookup computes nothing of them

   function To_Name_Set (Names : Name_List) return Name_Set
   with Post => To_Name_Set'Result.First = Names'First
                and then To_Name_Set'Result.Last = Names'Last;

   type Member_Values is array (Positive range <>) of Node_Id;

   procedure Find_Members
     (Self    : Document;
      Line    : String;
      Object  : Node_Id;
      Names   : Name_Set;
      Found   : out Member_Values;
      Unknown : out Node_Id)
   with Pre => Is_Line_Of (Self, Line)
               and then Kind (Self, Object) = Object_Value
               and then Found'First = Names.First
               and then Found'Last = Names.Last;
   --  In one walk over Object's members: Found (K) is the value of the
   --  member named by the K-th name of Names, as Member finds it (the last
   --  of duplicates, No_Node for none), and Unknown the first member whose
   --  name is not in Names (No_Node when every one is).  A member named
   --  none of Names costs nearly always one test of its name's signature,
   --  however many Names holds.

   function Text (Self : Document; Line : String; Node : Node_Id)
     return String
   with Pre => Is_Line_Of (Self, Line) and then Kind (Self, Node) = String_Value;
   --  The decoded string, as UTF-8

   function Text_Is
     (Self : Document; Line : String; Node : Node_Id; Value : String)
      return Boolean
   with Pre => Is_Line_Of (Self, Line) and then Kind (Self, Node) = String_Value;
   --  Whether Text (Self, Line, Node) = Value, compared where the string
   --  stands in Line when it holds no escape

   procedure Query_Text
     (Self    : Document;
      Line    : String;
      Node    : Node_Id;
      Process : not null access procedure (Text : String))
   with Pre => Is_Line_Of (Self, Line) and then Kind (Self, Node) = String_Value;
   --  Call Process with Text (Self, Line, Node): the string where it stands
   --  in Line when it holds no escape (nearly always), so reading it copies
   --  nothing; decoded into a copy only when it does

   function Raw (Self : Document; Line : String; Node : Node_Id) return String
   with Pre => Is_Line_Of (Self, Line);
   --  The value exactly as it stands in the line

private

   type Key_Signature is mod 2**32;

   --  A name's length (modulo 2**16: a filter, not an identity), first and
   --  last byte in one word
   function Signature_Of (Name : String) return Key_Signature is
     (if Name'Length = 0 then 0
      else Key_Signature (Name'Length mod 2**16) * 2**16
           + Key_Signature (Character'Pos (Name (Name'First))) * 2**8
           + Key_Signature (Character'Pos (Name (Name'Last))));

   type Signature_List is array (Positive range <>) of Key_Signature;

   type Signature_Set is mod 2**64;
   --  Signatures as a Bloom filter of two bits each: a key whose two bits
   --  are not both among the names' bits is none of the names, which
   --  spares nearly every other key the comparison with each name

   type Name_Set (First : Positive; Last : Natural) is record
      Names      : Name_List (First .. Last);
      Signatures : Signature_List (First .. Last);
      --  Signature_Of each name
      Any        : Signature_Set;
      --  The union of the signatures' bits
   end record;

   --  A value, in 32 bytes: a line of 4 MiB may hold ~320,000 of them, and
   --  the bytes a node takes are most of what such a line costs to read.
   --  No component has a default, so an array of nodes is allocated without
   --  writing to it; Parse writes every component of a node it makes.  What
   --  only the parse needs (the container a value is in, a container's last
   --  value so far) is kept on the parse's stack of open containers.
   type Node is record
      Kind         : Value_Kind;
      Has_Escapes  : Boolean;
      Key_Escaped  : Boolean;
      --  Whether the text or the key needs decoding
      First        : Positive;
      Last         : Natural;
      --  The value's text; for strings, what lies between the quotes
      Key_First    : Positive;
      Key_Last     : Natural;
      --  For an object member, its name between the quotes (else 1 .. 0)
      Key_Sig      : Key_Signature;
      --  Signature_Of the key as sent: a name lookup compares one word a
      --  member, and bytes only where the signature matches
      First_Child  : Node_Id;
      Next_Sibling : Node_Id;
   end record;

   type Node_Array is array (Node_Id range <>) of Node;
   type Node_Array_Access is access Node_Array;

   type Open_Container is record
      Container  : Node_Id;
      Last_Child : Node_Id;
      --  No_Node until its first value
   end record;

   type Open_Stack is array (Positive range <>) of Open_Container;
   type Open_Stack_Access is access Open_Stack;

   type Document is new Ada.Finalization.Limited_Controlled with record
      Nodes       : Node_Array_Access;
      --  Never shorter than the line last parsed has values (Parse makes it
      --  so before it reads), so no node moves while a line is read
      Open        : Open_Stack_Access;
      --  The containers open while a line is read, outermost first
      Count       : Node_Id := 0;
      Line_First  : Positive := 1;
      Line_Last   : Natural := 0;
      --  Bounds of the line last parsed
      Valid       : Boolean := False;
      Error_Text  : String (1 .. 80) := [others => ' '];
      Error_Last  : Natural := 0;
      Error_Col   : Positive := 1;
   end record;

   overriding procedure Finalize (Self : in out Document);

end Json_Reader;
