--  The one tool the body offers, `turn`: its declaration (input and output
--  schemas), the check of its arguments, and its result.  The output schema
--  and the writer of structuredContent sit side by side here so that they
--  cannot drift apart: the official SDK client validates one against the
--  other.

with Ada.Strings.Unbounded;
with Energy_Gate;
with Json_Reader;
with Json_Text;
with Organs;
with Organs.Identity;
with Turn_Cycle;

package Turn_Tool is

   use Ada.Strings.Unbounded;

   Name : constant String := "turn";

   Max_Key_Part_Bytes : constant := 256;

   procedure Write_Definition (Json : in out Json_Text.Builder);
   --  The tool object of tools/list

   type Argument is (Input, Uid, Channel, Server);

   type Argument_Nodes is array (Argument) of Json_Reader.Node_Id;

   type Turn_Request is record
      Valid   : Boolean := False;
      Problem : Unbounded_String;
      --  Why the arguments were refused, naming the field
      Given   : Argument_Nodes := [others => Json_Reader.No_Node];
      --  Each argument's string in the message, once Valid: read where it
      --  stands rather than copied
   end record;

   function Check_Arguments
     (Message   : Json_Reader.Document;
      Line      : String;
      Arguments : Json_Reader.Node_Id) return Turn_Request
   with Pre => Json_Reader.Is_Line_Of (Message, Line);
   --  Exactly the strings input, uid, channel and server; key parts
   --  non-empty, at most 256 bytes, free of control characters.  Absent
   --  arguments (No_Node) read as an empty object.

   function Value
     (Message : Json_Reader.Document;
      Line    : String;
      Request : Turn_Request;
      Field   : Argument) return String
   with Pre => Request.Valid and then Json_Reader.Is_Line_Of (Message, Line);
   --  The argument's string, decoded

   procedure Write_Refusal (Json : in out Json_Text.Builder; Problem : String);
   --  A tool execution error (isError: true) saying Problem

   type Result_Shapes is limited private;
   --  The structured result's templates, one for each number of passes, in
   --  both forms (as JSON, and already quoted as a string's text), each
   --  written the first time a turn needs it

   procedure Set_Identity
     (Shapes   : in out Result_Shapes;
      Stub     : Organs.Fixture;
      Identity : Organs.Identity.Big_Three)
   with Post => Has_Identity (Shapes);
   --  The identity every result carries (drawn at boot, never changed),
   --  written once for all the results written from Shapes

   function Has_Identity (Shapes : Result_Shapes) return Boolean;

   procedure Write_Result
     (Json   : in out Json_Text.Builder;
      Shapes : in out Result_Shapes;
      Trace  : Turn_Cycle.Turn_Trace)
   with Pre => Has_Identity (Shapes) and then Turn_Cycle.Is_Consistent (Trace)
               and then Json_Text.Is_Sealed (Trace.Texts);
   --  The members of a successful tools/call result: content (the output,
   --  then the structured result as JSON text), structuredContent, isError.
   --  The shape of a turn of Trace.Passes has a hole for each step that ran.

private

   type Shape_Templates is array (Energy_Gate.Pass_Count)
     of Json_Text.Template;
   --  The structured result of a turn by how many passes ran, with holes
   --  for its values: written the first time such a turn is answered

   type Result_Shapes is limited record
      Identity_Plain  : Json_Text.Builder;
      Identity_Quoted : Json_Text.Builder (Inside_String => True);
      Plain           : Shape_Templates := [others => Json_Text.No_Template];
      Quoted          : Shape_Templates := [others => Json_Text.No_Template];
   end record;

   function Has_Identity (Shapes : Result_Shapes) return Boolean is
     (Json_Text.Length (Shapes.Identity_Plain) > 0);

end Turn_Tool;
