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
   use type Json_Text.Hole_Kind;

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

   type Result_Identity is limited private;
   --  The identity every result carries (drawn at boot, never changed), in
   --  both forms: as JSON, and already quoted as a string's text

   procedure Set_Identity
     (Identity : in out Result_Identity;
      Stub     : Organs.Fixture;
      Drawn    : Organs.Identity.Big_Three)
   with Post => Has_Identity (Identity);

   function Has_Identity (Identity : Result_Identity) return Boolean;

   Result_Holes : constant := 1 + 2 * (10 + 23);
   --  The most holes Write_Result_Shape leaves: the output, then in each
   --  of the result's two copies ten values and a detail for each of the
   --  23 steps that ran

   procedure Write_Result_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Passes   : Energy_Gate.Pass_Count)
   with Pre => Has_Identity (Identity) and then not Json.Inside_String
               and then not Json.Is_Filling and then not Json.Is_In_Text
               and then Json.Hole_Count + Result_Holes <= Json_Text.Max_Holes;
   --  The members of a successful tools/call result of a turn of Passes
   --  passes, with a hole for each of its values: content (the output,
   --  then the structured result as JSON text), structuredContent, isError.
   --  A template of it is filled by Fill_Result.

   procedure Fill_Result
     (Json  : in out Json_Text.Builder;
      Trace : Turn_Cycle.Turn_Trace)
   with Pre  => Json.Is_Filling and then Turn_Cycle.Is_Consistent (Trace)
                and then Json_Text.Is_Sealed (Trace.Texts)
                and then Json.Next_Hole = Json_Text.Text_Hole,
        Post => not Json.Is_Filling;
   --  The holes a shape of Write_Result_Shape for Trace.Passes left, next
   --  in the template being filled, filled with Trace

private

   type Result_Identity is limited record
      Plain  : Json_Text.Builder;
      Quoted : Json_Text.Builder (Inside_String => True);
   end record;

   function Has_Identity (Identity : Result_Identity) return Boolean is
     (Json_Text.Length (Identity.Plain) > 0);

end Turn_Tool;
