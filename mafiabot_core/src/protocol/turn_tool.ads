--  The one tool the body offers, `turn`: its declaration (input and output
--  schemas), the check of its arguments, and its result.
--
--  The result's members are declared once, in one table (Result_Members):
--  the advertised outputSchema, the template of structuredContent and of
--  its copy in the text block, and the order their holes are filled in,
--  are all derived from it, so they cannot drift apart (the official SDK
--  client validates one against the other).  The compact text block
--  (--text-block compact) carries the members the table marks In_Summary,
--  written by the same procedure from the same table.  A member's value is
--  read from the trace by a function whose result type is the member's
--  kind: a number member cannot be given a text, for its reader returns a
--  number and the only fills of a number hole take numbers.

with Ada.Strings.Unbounded;
with Body_Config;
with Energy_Gate;
with Json_Reader;
with Json_Text;
with Organs;
with Organs.Identity;
with Organs.Sets;
with Session_Keys;
with Turn_Cycle;

package Turn_Tool is

   use Ada.Strings.Unbounded;
   use type Json_Text.Hole_Kind;

   Name : constant String := "turn";

   Max_Key_Part_Bytes : constant := Session_Keys.Max_Part_Bytes;

   procedure Write_Definition
     (Json         : in out Json_Text.Builder;
      Sampled      : Boolean := False;
      Intent_Asked : Boolean := False;
      Ranked       : Boolean := False);
   --  The tool object of tools/list; Sampled: of a body whose cognition is
   --  --cognition sampling (its outputSchema declares `cognition`);
   --  Intent_Asked: whose intender asks the model too (--intent model: its
   --  `cognition` declares `intent`); Ranked: whose recall ranks (--recall
   --  relevance: its outputSchema declares `recall`)

   type Argument is (Input, Uid, Channel, Server, Key_Origin);
   --  Key_Origin, optional: who set the key (the Level1 Hermes plugin
   --  says it did), echoed as the trace's session.origin

   type Argument_Nodes is array (Argument) of Json_Reader.Node_Id;

   type Turn_Request is limited record
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
   --  Exactly the strings input, uid, channel and server, and perhaps
   --  key_origin; key parts and key_origin non-empty, at most 256 bytes,
   --  free of control characters.  Absent arguments (No_Node) read as an
   --  empty object.

   function Is_Given (Request : Turn_Request; Field : Argument) return Boolean
   is (Json_Reader."/=" (Request.Given (Field), Json_Reader.No_Node));

   procedure Read_Values
     (Message : Json_Reader.Document;
      Line    : String;
      Request : Turn_Request;
      Process : not null access procedure
                  (Input, Uid, Channel, Server, Origin : String))
   with Pre => Request.Valid and then Json_Reader.Is_Line_Of (Message, Line);
   --  Call Process with the arguments' strings, decoded, Origin "" when
   --  key_origin is not given (given, it is never empty): each where it
   --  stands in Line unless it holds an escape (Json_Reader.Query_Text), so
   --  a turn copies none of them to read them

   procedure Write_Refusal (Json : in out Json_Text.Builder; Problem : String);
   --  A tool execution error (isError: true) saying Problem

   --  The result's members

   type Value_Kind is
     (Text, Choice, Fraction, Count, Pass_Total, Steps, Names, Given_Text,
      Account, Recollection);
   --  Text: a string of the trace; Choice: the intent, one of an enum;
   --  Fraction: a number in [0, 1]; Count: a whole number of 1 or more;
   --  Pass_Total: how many passes ran, the same on every turn of one shape;
   --  Steps: the 23 steps; Names: three names fixed at boot (identity);
   --  Given_Text: a string the call gave (key_origin), present in the
   --  result only when it was given, so optional in the schema
   --  Account: which cognition thought the turn and what each of its model
   --  calls came to, an object whose calls vary from turn to turn: only in
   --  the results (and the outputSchema) of a body run with --cognition
   --  sampling
   --  Recollection: how the turn's recall chose, and which earlier turns
   --  it drew on with their scores: only in the results (and the
   --  outputSchema) of a body run with --recall relevance, so that the
   --  fixture's results, and its replays, stay as they were

   type Group_Kind is (Result, Session, Route, Coherence, Identity);
   --  The object a member sits in: the result itself, or one of its
   --  objects (a group's members are contiguous in a table)

   function Group_Name (Group : Group_Kind) return String is
     (case Group is
         when Result => "",
         when Session => "session",
         when Route => "route",
         when Coherence => "coherence",
         when Identity => "identity");

   type Name_Text is access constant String;

   type Text_Reader is access
     function (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span;
   type Choice_Reader is access
     function (Trace : Turn_Cycle.Turn_Trace) return Organs.Intent_Kind;
   type Fraction_Reader is access
     function (Trace : Turn_Cycle.Turn_Trace) return Organs.Fraction;
   type Count_Reader is access
     function (Trace : Turn_Cycle.Turn_Trace) return Positive;
   --  Never null in a table (Is_Well_Formed); nullable only so that a list
   --  of members can be default-initialized, as concatenation does

   type Identity_List is (Roles, Cards);

   type Summary_Part is (In_Summary, Trace_Only);
   --  In_Summary: also in the one-line summary of a compact text block;
   --  Trace_Only: only in structuredContent and a full text block

   type Member (Kind : Value_Kind := Pass_Total) is record
      Name  : Name_Text;
      Group : Group_Kind := Result;
      Part  : Summary_Part := Trace_Only;
      case Kind is
         when Text => Text_Of : Text_Reader;
         when Choice => Choice_Of : Choice_Reader;
         when Fraction => Fraction_Of : Fraction_Reader;
         when Count => Count_Of : Count_Reader;
         when Pass_Total | Steps | Given_Text | Account | Recollection =>
            null;
         when Names => List : Identity_List;
      end case;
   end record;
   --  One member of the result: its name, its object, whether a compact
   --  text block carries it, and how its value is read (a member whose
   --  value changes from turn to turn is a hole of the templates)

   type Member_List is array (Positive range <>) of Member;

   function Is_Well_Formed (Members : Member_List) return Boolean;
   --  Every member named and read; each group's members contiguous, names
   --  unique within an object

   Result_Members : constant Member_List;
   --  The turn result, in the order it is written: the one place a member
   --  is declared

   function Summary_Of (Members : Member_List) return Member_List
   with Post => (for all M of Summary_Of'Result => M.Part = In_Summary);
   --  The members of Members marked In_Summary, in their order

   function Holes_Per_Copy (Members : Member_List) return Natural;
   --  The holes one copy of the result of Members leaves, at most: one for
   --  each member read from the trace and one for each step's detail

   procedure Write_Output_Schema
     (Json         : in out Json_Text.Builder;
      Members      : Member_List := Result_Members;
      Sampled      : Boolean := False;
      Intent_Asked : Boolean := False;
      Ranked       : Boolean := False)
   with Pre => Is_Well_Formed (Members);
   --  The JSON Schema of a result of Members: each object's properties in
   --  the table's order, all of them required but Given_Text ones, nothing
   --  else allowed; an Account member only when Sampled, with its intent
   --  statement only when Intent_Asked, a Recollection member only when
   --  Ranked

   type Result_Identity is limited private;
   --  What every result carries that is fixed at boot: the identity drawn
   --  and the form of the text block (Full unless Set_Text_Block says)

   procedure Set_Identity
     (Identity : in out Result_Identity;
      Chosen   : Organs.Sets.Organ_Set;
      Drawn    : Organs.Identity.Big_Three)
   with Pre  => Organs.Sets.Is_Complete (Chosen),
        Post => Has_Identity (Identity)
                and then Is_Intent_Asked (Identity)
                         = Chosen.Intender.Asks_Model;
   --  Also whether the chosen intender asks the model: the results of
   --  such a body state who named each turn's intent (Is_Intent_Asked)

   function Has_Identity (Identity : Result_Identity) return Boolean;

   procedure Set_Cognition
     (Identity : in out Result_Identity; Kind : Body_Config.Cognition_Kind);
   --  Whether the results written from now on carry their Account members
   --  (Sampling) or not (Stub, the default), as Set_Text_Block

   function Is_Sampled (Identity : Result_Identity) return Boolean;

   procedure Set_Recall
     (Identity : in out Result_Identity; Kind : Body_Config.Recall_Kind);
   --  Whether the results written from now on carry their Recollection
   --  members (Relevance) or not (Fixture, the default), as Set_Text_Block

   function Is_Ranked (Identity : Result_Identity) return Boolean;

   function Is_Intent_Asked (Identity : Result_Identity) return Boolean;

   procedure Set_Text_Block
     (Identity : in out Result_Identity; Form : Body_Config.Text_Block_Form);
   --  The text block of the results written from now on (shapes written
   --  before keep theirs: the caller writes its shapes again)

   procedure Write_Result_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Passes   : Energy_Gate.Pass_Count;
      Members  : Member_List := Result_Members;
      Given    : Boolean := False)
   with Pre => Has_Identity (Identity) and then Is_Well_Formed (Members)
               and then not Json.Inside_String
               and then not Json.Is_Filling and then not Json.Is_In_Text
               and then Json.Hole_Count + 1 + 2 * Holes_Per_Copy (Members)
                        <= Json_Text.Max_Holes;
   --  The members of a successful tools/call result of a turn of Passes
   --  passes, with a hole for each of its values: content (the output,
   --  then the result as JSON text: all of it, or only its summary members
   --  when the text block is Compact), structuredContent, isError.  A
   --  template of it is filled by Fill_Result with the same Identity and
   --  Members, and an Origin that is not empty exactly when Given (the
   --  Given_Text members are written only then).

   procedure Fill_Result
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Trace    : Turn_Cycle.Turn_Trace;
      Members  : Member_List := Result_Members;
      Origin   : String := "")
   with Pre  => Json.Is_Filling and then Turn_Cycle.Is_Complete (Trace)
                and then Json.Next_Hole = Json_Text.Text_Hole,
        Post => not Json.Is_Filling;
   --  The holes a shape of Write_Result_Shape for Identity, Trace.Passes,
   --  Members and Given => Origin /= "" left, next in the template being
   --  filled, filled with Trace (and the Given_Text members with Origin)

private

   type Name_Access is access constant String;

   type Identity_Names is array (Organs.Identity.Role) of Name_Access;

   type Result_Identity is limited record
      Roles      : Identity_Names;
      Cards      : Identity_Names;
      Text_Block : Body_Config.Text_Block_Form := Body_Config.Full;
      Sampled    : Boolean := False;
      Intent_Asked : Boolean := False;
      Ranked     : Boolean := False;
   end record;

   function Is_Sampled (Identity : Result_Identity) return Boolean is
     (Identity.Sampled);

   function Is_Ranked (Identity : Result_Identity) return Boolean is
     (Identity.Ranked);

   function Is_Intent_Asked (Identity : Result_Identity) return Boolean is
     (Identity.Intent_Asked);

   function Has_Identity (Identity : Result_Identity) return Boolean is
     ((for all Name of Identity.Roles => Name /= null)
      and then (for all Name of Identity.Cards => Name /= null));

   function Uid_Of (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span is
     (Trace.Uid);
   function Channel_Of (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span
   is (Trace.Channel);
   function Server_Of (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span
   is (Trace.Server);
   function Turn_Of (Trace : Turn_Cycle.Turn_Trace) return Positive is
     (Trace.Turn);
   function Energy_Of (Trace : Turn_Cycle.Turn_Trace) return Organs.Fraction
   is (Trace.Energy);
   function Intent_Of (Trace : Turn_Cycle.Turn_Trace)
     return Organs.Intent_Kind is (Trace.Intent);
   function Route_Of (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span is
     (Trace.Route);
   function Score_Of (Trace : Turn_Cycle.Turn_Trace) return Organs.Fraction is
     (Trace.Coherence);
   function Drift_Of (Trace : Turn_Cycle.Turn_Trace) return Organs.Fraction is
     (Trace.Drift);
   function Output_Of (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span
   is (Trace.Output);

   function Named (Name : String) return Name_Text is (new String'(Name));

   Result_Members : constant Member_List :=
     [Member'(Text, Named ("uid"), Session, Trace_Only, Uid_Of'Access),
      Member'(Text, Named ("channel"), Session, Trace_Only, Channel_Of'Access),
      Member'(Text, Named ("server"), Session, Trace_Only, Server_Of'Access),
      Member'(Given_Text, Named ("origin"), Session, Trace_Only),
      Member'(Count, Named ("turn"), Result, In_Summary, Turn_Of'Access),
      Member'(Fraction, Named ("energy"), Result, In_Summary, Energy_Of'Access),
      Member'(Pass_Total, Named ("passes_run"), Result, In_Summary),
      Member'(Steps, Named ("steps"), Result, Trace_Only),
      Member'(Choice, Named ("intent"), Route, In_Summary, Intent_Of'Access),
      Member'(Text, Named ("target"), Route, In_Summary, Route_Of'Access),
      Member'(Fraction, Named ("score"), Coherence, In_Summary, Score_Of'Access),
      Member'(Fraction, Named ("drift"), Coherence, In_Summary, Drift_Of'Access),
      Member'(Text, Named ("output"), Result, Trace_Only, Output_Of'Access),
      Member'(Names, Named ("roles"), Identity, Trace_Only, Roles),
      Member'(Names, Named ("cards"), Identity, Trace_Only, Cards),
      Member'(Recollection, Named ("recall"), Result, Trace_Only),
      Member'(Account, Named ("cognition"), Result, Trace_Only)];

end Turn_Tool;
