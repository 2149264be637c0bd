with Ada.Strings.Unbounded;
with Ada.Unchecked_Deallocation;
with Body_Log;
with Lifecycle_Checks;
with Turn_Cycle;
with Turn_Thinkers;

package body Hermes_Protocol is

   use Ada.Strings.Unbounded;
   use Json_Reader;
   use type Input_Guard.Finding;

   --  JSON-RPC and MCP error codes
   Parse_Error         : constant := -32_700;
   Invalid_Request     : constant := -32_600;
   Method_Not_Found    : constant := -32_601;
   Invalid_Params      : constant := -32_602;
   Internal_Error      : constant := -32_603;
   Unsupported_Version : constant := -32_022;

   Version_Key      : constant String := "io.modelcontextprotocol/protocolVersion";
   Capabilities_Key : constant String :=
     "io.modelcontextprotocol/clientCapabilities";
   Server_Info_Key  : constant String := "io.modelcontextprotocol/serverInfo";

   Legacy_Versions : constant array (1 .. 4) of access constant String :=
     [new String'("2024-11-05"), new String'("2025-03-26"),
      new String'("2025-06-18"), new String'(Latest_Legacy)];

   Tools_Ttl_Ms : constant := 3_600_000;
   --  The tool list is fixed at build time: an hour of caching is safe

   Null_Id : constant String := "null";

   Instructions : constant String :=
     "Call `turn` once per user message with the message as `input` and the"
     & " speaker's uid, channel and server. Each call returns the output and"
     & " the trace of the 23-step cycle for that session alone.";

   --  What one request comes to before it is written out.
   type Outcome is record
      Failed  : Boolean := False;
      Code    : Integer := 0;
      Message : Unbounded_String;
      Data    : Unbounded_String;
      --  JSON text of the error's data member; empty for none
   end record;

   function Failure (Code : Integer; Message : String; Data : String := "")
     return Outcome is
     ((Failed => True, Code => Code,
       Message => To_Unbounded_String (Message),
       Data => To_Unbounded_String (Data)));

   --  {"jsonrpc":"2.0","id": -- the id comes next
   procedure Start_Envelope (Json : in out Json_Text.Builder) is
   begin
      Json.Start_Object;
      Json.Text_Field ("jsonrpc", "2.0");
      Json.Key ("id");
   end Start_Envelope;

   --  Replace whatever Json holds with the error response
   procedure Write_Error
     (Json : in out Json_Text.Builder; Id : String; Problem : Outcome) is
   begin
      Json.Reset;
      Start_Envelope (Json);
      Json.Raw (Id);
      Json.Key ("error");
      Json.Start_Object;
      Json.Int_Field ("code", Long_Long_Integer (Problem.Code));
      Json.Text_Field ("message", To_String (Problem.Message));
      if Length (Problem.Data) > 0 then
         Json.Raw_Field ("data", To_String (Problem.Data));
      end if;
      Json.End_Object;
      Json.End_Object;
   end Write_Error;

   procedure Configure
     (Self     : in out Server;
      Settings : Body_Config.Settings;
      Chosen   : Organs.Sets.Organ_Set;
      Identity : Organs.Identity.Big_Three;
      Client   : not null Client_Channels.Channel_Access;
      Turns    : not null Turn_Service.Service_Access) is
   begin
      Self.Limits := (Max_Depth => Settings.Max_Depth,
                      Max_Elements => Settings.Max_Elements);
      Self.Max_Line := Settings.Max_Line_Bytes;
      Turn_Tool.Set_Identity (Self.Identity, Chosen, Identity);
      Turn_Tool.Set_Text_Block (Self.Identity, Settings.Text_Block);
      Turn_Tool.Set_Cognition (Self.Identity, Settings.Cognition);
      Turn_Tool.Set_Recall (Self.Identity, Settings.Recall);
      Self.Client := Client;
      Self.Turns := Turns;
      --  The replies carry the identity: they are written again
      for Era_Shapes of Self.Replies loop
         Json_Text.Free (Era_Shapes);
      end loop;
   end Configure;

   procedure Send (Self : in out Server; Json : in out Json_Text.Builder) is
      procedure Write (Message : String) is
      begin
         Self.Client.Send (Message);
      end Write;
   begin
      Json.End_Line;
      Json.Query (Write'Access);
   end Send;

   procedure Refuse_Oversized (Self : in out Server; Length : Natural) is
      --  Not an exchange's: a line read while a turn waits on the client
      --  (--cognition sampling) is refused while the turn's reply is
      --  being made in Main
      Json : Json_Text.Builder;
   begin
      Write_Error
        (Json, Null_Id,
         Failure (Invalid_Request,
                  "Invalid Request: line of" & Length'Image
                  & " bytes exceeds the limit of" & Self.Max_Line'Image
                  & " bytes (--max-line-bytes)"));
      Send (Self, Json);
   end Refuse_Oversized;

   --  First_Byte is the index the line starts at: positions in messages
   --  count from 1 at the line's start.
   function Guard_Failure
     (Verdict : Input_Guard.Verdict; First_Byte : Positive; Self : Server)
     return Outcome is
      At_Byte : constant String :=
        " at byte" & Natural'Image (Verdict.Offset - First_Byte + 1);
   begin
      case Input_Guard.Rejection (Verdict.Kind) is
         when Input_Guard.Invalid_Utf8 =>
            return Failure (Parse_Error, "Parse error: invalid UTF-8" & At_Byte);
         when Input_Guard.Control_In_String =>
            return Failure (Parse_Error, "Parse error: raw control character"
                            & " in a string" & At_Byte);
         when Input_Guard.Lone_Surrogate =>
            return Failure (Parse_Error, "Parse error: lone UTF-16 surrogate"
                            & " escape" & At_Byte);
         when Input_Guard.Too_Deep =>
            return Failure (Invalid_Request, "Invalid Request: nested deeper"
                            & " than" & Self.Limits.Max_Depth'Image
                            & " levels (--max-depth)" & At_Byte);
         when Input_Guard.Too_Many_Elements =>
            return Failure (Invalid_Request, "Invalid Request: more than"
                            & Self.Limits.Max_Elements'Image
                            & " elements (--max-elements)" & At_Byte);
      end case;
   end Guard_Failure;

   ---------------------------------------------------------------------
   --  Results

   procedure Open_Result (Json : in out Json_Text.Builder; Id : String) is
   begin
      Start_Envelope (Json);
      Json.Raw (Id);
      Json.Key ("result");
      Json.Start_Object;
   end Open_Result;

   procedure Write_Server_Info (Json : in out Json_Text.Builder) is
   begin
      Json.Start_Object;
      Json.Text_Field ("name", "mafiabot");
      Json.Text_Field ("title", "mafiabot body");
      Json.Text_Field ("version", Body_Config.Version);
      Json.End_Object;
   end Write_Server_Info;

   --  Members every modern result carries (resultType is required, the
   --  server's identity is recommended on every response), then the
   --  closing braces.
   procedure Close_Result
     (Json        : in out Json_Text.Builder;
      Modern      : Boolean;
      Result_Type : String := "complete")
   is
   begin
      if Modern then
         Json.Text_Field ("resultType", Result_Type);
         Json.Key ("_meta");
         Json.Start_Object;
         Json.Key (Server_Info_Key);
         Write_Server_Info (Json);
         Json.End_Object;
      end if;
      Json.End_Object;
      Json.End_Object;
   end Close_Result;

   procedure Write_Capabilities (Json : in out Json_Text.Builder) is
   begin
      Json.Key ("capabilities");
      Json.Start_Object;
      Json.Key ("tools");
      Json.Start_Object;
      Json.Bool_Field ("listChanged", False);
      Json.End_Object;
      Json.End_Object;
   end Write_Capabilities;

   --  Reading the parsed message.  Line is the line Reader parsed; a
   --  missing or mistyped value reads as No_Node or "".

   function Field
     (Reader : Document; Line : String; Object : Node_Id; Name : String)
      return Node_Id is
     (if Object /= No_Node and then Kind (Reader, Object) = Object_Value
      then Member (Reader, Line, Object, Name) else No_Node);

   function Is_Object (Reader : Document; Node : Node_Id) return Boolean is
     (Node /= No_Node and then Kind (Reader, Node) = Object_Value);

   function Text_Of (Reader : Document; Line : String; Node : Node_Id)
     return String is
     (if Node /= No_Node and then Kind (Reader, Node) = String_Value
      then Text (Reader, Line, Node) else "");

   --  Whether Text_Of (Reader, Line, Node) = Value, without a copy of it
   function Is_Text
     (Reader : Document; Line : String; Node : Node_Id; Value : String)
      return Boolean is
     (Node /= No_Node and then Kind (Reader, Node) = String_Value
      and then Text_Is (Reader, Line, Node, Value));

   function Text_Member
     (Reader : Document; Line : String; Object : Node_Id; Name : String)
      return String is
     (Text_Of (Reader, Line, Field (Reader, Line, Object, Name)));

   --  The members of an object a request is read by, named by an
   --  enumeration: Members_Of finds them all in one walk over the object's
   --  members, however many it has (a line of 4 MiB may hold ~320,000)
   generic
      type Member_Kind is (<>);
      type Member_Set is array (Member_Kind) of Node_Id;
      Names : Json_Reader.Name_List;
      --  Member_Kind's names on the wire, in its order
      Set : Json_Reader.Name_Set := Json_Reader.To_Name_Set (Names);
      --  Names made a set once, where the function is instantiated
   function Members_Of (Reader : Document; Line : String; Object : Node_Id)
     return Member_Set;
   --  Object's members named by Names, as Member finds them (of duplicates
   --  the last); No_Node for those it lacks, and for all of them when
   --  Object is not an object.  Members not in Names are left alone.

   function Members_Of (Reader : Document; Line : String; Object : Node_Id)
     return Member_Set
   is
      pragma Compile_Time_Error
        (Member_Kind'Pos (Member_Kind'Last) - Member_Kind'Pos
           (Member_Kind'First) + 1 /= Names'Length,
         "every member kind needs its name");
      Found   : Member_Values (Names'Range);
      Unknown : Node_Id;
   begin
      if not Is_Object (Reader, Object) then
         return [others => No_Node];
      end if;
      Find_Members (Reader, Line, Object, Set, Found, Unknown);
      return [for Member in Member_Kind =>
                Found (Names'First + Member_Kind'Pos (Member)
                                   - Member_Kind'Pos (Member_Kind'First))];
   end Members_Of;

   --  The members of params some method reads: each request walks params'
   --  members once, not once a name
   type Params_Member is
     (Meta, Tool_Name, Arguments, Cursor, Protocol_Version, Capabilities,
      Request_State, Input_Responses);

   type Params_Members is array (Params_Member) of Node_Id;

   function Params_Of is new Members_Of
     (Params_Member, Params_Members,
      [new String'("_meta"), new String'("name"), new String'("arguments"),
       new String'("cursor"), new String'("protocolVersion"),
       new String'("capabilities"), new String'("requestState"),
       new String'("inputResponses")]);

   procedure Answer_Initialize
     (Self : in out Server; Reader : Document; Line : String;
      Params : Params_Members; Id : String; Problem : out Outcome;
      Json : in out Json_Text.Builder)
   is
      Asked : constant String :=
        Text_Of (Reader, Line, Params (Protocol_Version));
   begin
      if Asked = "" then
         Problem := Failure (Invalid_Params, "Invalid params: initialize"
                             & " needs protocolVersion (a string)");
         return;
      end if;
      Self.Initialized := True;
      Self.Client_Samples :=
        Is_Object (Reader,
                   Field (Reader, Line, Params (Capabilities), "sampling"));
      Open_Result (Json, Id);
      Json.Text_Field
        ("protocolVersion",
         (if (for some Known of Legacy_Versions => Known.all = Asked)
          then Asked else Latest_Legacy));
      Write_Capabilities (Json);
      Json.Key ("serverInfo");
      Write_Server_Info (Json);
      Json.Text_Field ("instructions", Instructions);
      Close_Result (Json, Modern => False);
   end Answer_Initialize;

   procedure Answer_Discover
     (Id : String; Json : in out Json_Text.Builder) is
   begin
      Open_Result (Json, Id);
      Json.Key ("supportedVersions");
      Json.Start_Array;
      Json.Text (Modern_Version);
      Json.End_Array;
      Write_Capabilities (Json);
      Json.Text_Field ("instructions", Instructions);
      Json.Int_Field ("ttlMs", Tools_Ttl_Ms);
      Json.Text_Field ("cacheScope", "public");
      Close_Result (Json, Modern => True);
   end Answer_Discover;

   procedure Answer_Tools_List
     (Params : Params_Members; Id : String; Modern : Boolean;
      Problem : out Outcome; Json : in out Json_Text.Builder;
      Sampled : Boolean; Intent_Asked : Boolean; Ranked : Boolean) is
   begin
      if Params (Cursor) /= No_Node then
         Problem := Failure (Invalid_Params, "Invalid params: unknown cursor"
                             & " (the tool list has a single page)");
         return;
      end if;
      Open_Result (Json, Id);
      Json.Key ("tools");
      Json.Start_Array;
      Turn_Tool.Write_Definition
        (Json, Sampled => Sampled, Intent_Asked => Intent_Asked,
         Ranked => Ranked);
      Json.End_Array;
      if Modern then
         Json.Int_Field ("ttlMs", Tools_Ttl_Ms);
         Json.Text_Field ("cacheScope", "public");
      end if;
      Close_Result (Json, Modern);
   end Answer_Tools_List;

   --  The reply to a turn of Passes passes in its era, written with holes
   --  for the id and the turn's values the first time one is answered
   function Reply_Shape
     (Self : in out Server; Passes : Energy_Gate.Pass_Count; Modern : Boolean;
      Given_Origin : Boolean) return Json_Text.Template
   is
      use type Json_Text.Template;

      procedure Write_Once (Shape : in out Json_Text.Template) is
      begin
         if Shape = Json_Text.No_Template then
            declare
               Json : Json_Text.Builder;
            begin
               Start_Envelope (Json);
               Json.Hole (Json_Text.Raw_Hole);
               Json.Key ("result");
               Json.Start_Object;
               Turn_Tool.Write_Result_Shape
                 (Json, Self.Identity, Passes, Given => Given_Origin);
               Close_Result (Json, Modern);
               Shape := Json.To_Template;
            end;
         end if;
      end Write_Once;
   begin
      if Given_Origin then
         Write_Once (Self.Origin_Replies (Modern, Passes));
         return Self.Origin_Replies (Modern, Passes);
      end if;
      Write_Once (Self.Replies (Modern, Passes));
      return Self.Replies (Modern, Passes);
   end Reply_Shape;

   procedure Answer_Tools_Call
     (Self : in out Server; X : in out Exchange; Line : String;
      Params : Params_Members; Id : String; Modern : Boolean;
      Problem : out Outcome)
   with No_Inline;
   --  The turn it takes (Take_Turn, within it) holds a turn's trace (24 KB)
   --  in its frame, probed page by page on entry (-fstack-check): inlined,
   --  every request would enter it, and start-up
   --  (spawn to initialize answered) would take four more page faults

   procedure Answer_Tools_Call
     (Self : in out Server; X : in out Exchange; Line : String;
      Params : Params_Members; Id : String; Modern : Boolean;
      Problem : out Outcome)
   is
      use type Turn_Thinkers.Client_Reach;
      Json : Json_Text.Builder renames X.Answer;
   begin
      if not Is_Text (X.Reader, Line, Params (Tool_Name), Turn_Tool.Name) then
         declare
            --  Copied only to be refused
            Tool : constant String :=
              Text_Of (X.Reader, Line, Params (Tool_Name));
         begin
            Problem :=
              (if Tool = ""
               then Failure (Invalid_Params, "Invalid params: tools/call"
                             & " needs name (a string)")
               else Failure (Invalid_Params, "Unknown tool: " & Tool));
         end;
         return;
      end if;

      declare
         Request : constant Turn_Tool.Turn_Request :=
           Turn_Tool.Check_Arguments (X.Reader, Line, Params (Arguments));

         Reach : constant Turn_Thinkers.Client_Reach :=
           (if Modern then
              (if Is_Object
                   (X.Reader,
                    Field (X.Reader, Line,
                           Field (X.Reader, Line, Params (Meta),
                                  Capabilities_Key),
                           "sampling"))
               then Turn_Thinkers.Rounds else Turn_Thinkers.None)
            elsif Self.Client_Samples then Turn_Thinkers.Live
            else Turn_Thinkers.None);
         --  How the client says it can be asked for its model

         procedure Take_Turn (Input, Uid, Channel, Server, Origin : String)
         is
            Trace  : Turn_Cycle.Turn_Trace;
            Result : Turn_Service.Outcome;
         begin
            Self.Turns.Take_Turn
              (Reach     => Reach,
               Call_Id   => Id,
               State     =>
                 (if Reach = Turn_Thinkers.Rounds
                  then Text_Of (X.Reader, Line, Params (Request_State))
                  else ""),
               Responses =>
                 (if Reach = Turn_Thinkers.Rounds
                    and then Params (Input_Responses) /= No_Node
                  then Raw (X.Reader, Line, Params (Input_Responses))
                  else ""),
               Uid       => Uid,
               Channel   => Channel,
               Server    => Server,
               Input     => Input,
               Trace     => Trace,
               Result    => Result);
            case Result.Ended is
               when Turn_Service.Answered =>
                  Json.Start_Filling
                    (Reply_Shape (Self, Trace.Passes, Modern, Origin /= ""));
                  Json.Fill_Raw (Id);
                  Turn_Tool.Fill_Result
                    (Json, Self.Identity, Trace, Origin => Origin);
               when Turn_Service.Refused =>
                  Problem := Failure
                    (Invalid_Params,
                     "Invalid params: " & To_String (Result.Reason));
               when Turn_Service.Needs_Input =>
                  Open_Result (Json, Id);
                  Json.Raw_Field ("inputRequests",
                                  Self.Turns.Pending_Requests);
                  Json.Text_Field ("requestState", Self.Turns.Pending_State);
                  Close_Result (Json, Modern, "input_required");
               when Turn_Service.Cancelled =>
                  --  MCP: a cancelled request gets no response
                  X.Silent := True;
                  Body_Log.Info ("turn " & Id & " cancelled by the"
                                 & " client: not answered");
               when Turn_Service.Store_Failed =>
                  Problem := Failure
                    (Store_Failed, "Session store failed: "
                     & To_String (Result.Reason));
            end case;
         end Take_Turn;
      begin
         if not Request.Valid then
            Open_Result (Json, Id);
            Turn_Tool.Write_Refusal (Json, To_String (Request.Problem));
            Close_Result (Json, Modern);
            return;
         end if;
         Turn_Tool.Read_Values (X.Reader, Line, Request, Take_Turn'Access);
      end;
   end Answer_Tools_Call;

   ---------------------------------------------------------------------
   --  One message

   type Envelope_Member is (Jsonrpc, Id, Method, Params, Result, Error);

   type Envelope is array (Envelope_Member) of Node_Id;
   --  The members of a message JSON-RPC defines, No_Node for those it
   --  lacks; of duplicates the last, as Member finds

   function Envelope_Of is new Members_Of
     (Envelope_Member, Envelope,
      [new String'("jsonrpc"), new String'("id"), new String'("method"),
       new String'("params"), new String'("result"), new String'("error")]);

   --  Write the response to a request into X.Answer: what the lifecycle
   --  allows is dispatched on its method, the rest refused
   procedure Serve_Request
     (Self : in out Server; X : in out Exchange; Line : String;
      Members : Envelope; Id : String)
   is
      package Lifecycle renames Lifecycle_Checks;
      use type Lifecycle.Method_Kind;

      Method_Name : constant String :=
        Text_Of (X.Reader, Line, Members (Method));
      Method  : constant Lifecycle.Method_Kind :=
        Lifecycle.Method_Of (Method_Name);
      Params  : constant Node_Id := Members (Hermes_Protocol.Params);
      Given   : constant Params_Members := Params_Of (X.Reader, Line, Params);
      Meta    : constant Node_Id := Given (Hermes_Protocol.Meta);
      Claimed : constant Boolean :=
        Field (X.Reader, Line, Meta, Version_Key) /= No_Node;
      Asked   : constant String :=
        (if Claimed then Text_Member (X.Reader, Line, Meta, Version_Key)
         else "");
      Json    : Json_Text.Builder renames X.Answer;
      Problem : Outcome;
   begin
      if Params /= No_Node and then not Is_Object (X.Reader, Params) then
         Problem := Failure (Invalid_Params,
                             "Invalid params: params must be an object");
      elsif Method = Lifecycle.Unknown then
         Problem := Failure
           (Method_Not_Found, "Method not found: " & Method_Name);
      else
         declare
            Verdict : constant Lifecycle.Verdict :=
              Lifecycle.Check
                (Self.Initialized,
                 (Method             => Method,
                  Version            =>
                    (if not Claimed then Lifecycle.Unstated
                     elsif Asked = Modern_Version then Lifecycle.Modern
                     else Lifecycle.Other),
                  Capabilities_Given =>
                    Is_Object
                      (X.Reader,
                       Field (X.Reader, Line, Meta, Capabilities_Key))));
            Modern : constant Boolean := Verdict.Is_Modern;
         begin
            case Verdict.Outcome is
               when Lifecycle.Allowed =>
                  case Method is
                     when Lifecycle.Initialize =>
                        Answer_Initialize
                          (Self, X.Reader, Line, Given, Id, Problem, Json);
                     when Lifecycle.Ping =>
                        Open_Result (Json, Id);
                        Close_Result (Json, Modern);
                     when Lifecycle.Discover =>
                        Answer_Discover (Id, Json);
                     when Lifecycle.Tools_List =>
                        Answer_Tools_List
                          (Given, Id, Modern, Problem, Json,
                           Turn_Tool.Is_Sampled (Self.Identity),
                           Turn_Tool.Is_Intent_Asked (Self.Identity),
                          Turn_Tool.Is_Ranked (Self.Identity));
                     when Lifecycle.Tools_Call =>
                        Answer_Tools_Call
                          (Self, X, Line, Given, Id, Modern, Problem);
                     when Lifecycle.Unknown =>
                        null;
                  end case;
               when Lifecycle.Unsupported_Version =>
                  Problem := Failure
                    (Unsupported_Version, "Unsupported protocol version",
                     "{""supported"":[" & Json_Text.Quoted (Modern_Version)
                     & "],""requested"":"
                     & (if Asked = "" then "null"
                        else Json_Text.Quoted (Asked)) & "}");
               when Lifecycle.Missing_Capabilities =>
                  Problem := Failure
                    (Invalid_Params, "Invalid params: _meta needs "
                     & Capabilities_Key & " (an object)");
               when Lifecycle.Already_Initialized =>
                  Problem := Failure (Invalid_Request,
                                      "Invalid Request: already initialized");
               when Lifecycle.Not_Initialized =>
                  Problem := Failure
                    (Invalid_Request, "Invalid Request: not initialized (send"
                     & " initialize first, or use protocol version "
                     & Modern_Version & " in _meta)");
            end case;
         end;
      end if;

      if Problem.Failed then
         Write_Error (Json, Id, Problem);
      end if;
   end Serve_Request;

   function Is_Blank (Line : String) return Boolean is
     (for all C of Line => C in ' ' | ASCII.HT | ASCII.CR);

   --  The id a response to Line echoes: as it was sent, or null
   function Id_Of (X : Exchange; Line : String) return String is
     (if X.Answering = No_Node then Null_Id
      else Raw (X.Reader, Line, X.Answering));

   ---------------------------------------------------------------------
   --  The one classifier

   type Message_Kind is
     (Blank,
      --  Nothing to read
      Not_Json,
      --  Refused by the guard or the parser: Problem
      Not_Message,
      --  JSON, but no message JSON-RPC allows (a batch, a scalar, a bad
      --  id, jsonrpc or method): Problem
      Response,
      --  A result or an error, whatever its id: never answered
      Notification,
      Request);

   type Classified is limited record
      Kind    : Message_Kind := Blank;
      Members : Envelope := [others => No_Node];
      Problem : Outcome;
   end record;

   --  Parse Line into X.Reader and say what it is; X.Answering is set to
   --  its id once that is found to be one JSON-RPC allows
   function Classify
     (Self : Server; X : in out Exchange; Line : String) return Classified
   is
   begin
      X.Answering := No_Node;
      X.Silent := False;
      X.Answer.Reset;
      if Is_Blank (Line) then
         return (Kind => Blank, others => <>);
      end if;

      --  One pass reads the line and holds it to the guard's rules; only a
      --  refused line is inspected, for the guard's findings come first.
      X.Reader.Parse (Line, Self.Limits);
      if not X.Reader.Is_Valid then
         declare
            Verdict : constant Input_Guard.Verdict :=
              Input_Guard.Inspect (Line, Self.Limits);
         begin
            return
              (Kind    => Not_Json,
               Members => <>,
               Problem =>
                 (if Verdict.Kind /= Input_Guard.Clean
                  then Guard_Failure (Verdict, Line'First, Self)
                  else Failure (Parse_Error, "Parse error: "
                                & X.Reader.Error_Message & " at column"
                                & X.Reader.Error_Column'Image)));
         end;
      end if;

      case Kind (X.Reader, X.Reader.Root) is
         when Array_Value =>
            return
              (Kind    => Not_Message,
               Members => <>,
               Problem => Failure
                 (Invalid_Request, "Invalid Request: batches are not"
                  & " supported (MCP removed JSON-RPC batching in"
                  & " 2025-06-18)"));
         when Object_Value =>
            null;
         when others =>
            return
              (Kind    => Not_Message,
               Members => <>,
               Problem => Failure (Invalid_Request, "Invalid Request: a"
                                   & " message must be a JSON object"));
      end case;

      declare
         Members : constant Envelope :=
           Envelope_Of (X.Reader, Line, X.Reader.Root);
         Id_Node : constant Node_Id := Members (Id);
      begin
         if Members (Method) = No_Node
           and then (Members (Result) /= No_Node
                     or else Members (Error) /= No_Node)
         then
            --  Answered, a response would be answered back by a peer that
            --  answers responses: two such peers would loop
            return (Kind => Response, Members => Members, Problem => <>);
         elsif Id_Node /= No_Node
           and then Kind (X.Reader, Id_Node) not in Number_Value | String_Value
         then
            return (Kind => Not_Message, Members => Members,
                    Problem => Failure
                      (Invalid_Request, "Invalid Request: id must be a"
                       & " string or a number"));
         end if;
         X.Answering := Id_Node;
         if not Is_Text (X.Reader, Line, Members (Jsonrpc), "2.0") then
            return (Kind => Not_Message, Members => Members,
                    Problem => Failure
                      (Invalid_Request,
                       "Invalid Request: jsonrpc must be ""2.0"""));
         elsif Members (Method) = No_Node
           or else Kind (X.Reader, Members (Method)) /= String_Value
         then
            return (Kind => Not_Message, Members => Members,
                    Problem => Failure
                      (Invalid_Request,
                       "Invalid Request: method must be a string"));
         end if;
         return (Kind    => (if Id_Node = No_Node then Notification
                             else Request),
                 Members => Members,
                 Problem => <>);
      end;
   end Classify;

   ---------------------------------------------------------------------
   --  The calls that wait for the turn in flight

   procedure Free is new Ada.Unchecked_Deallocation (String, Text_Access);

   --  Queue Line, the tools/call of Id; False when there is no room
   function Enqueue (Self : in out Server; Line, Id : String) return Boolean
   is
   begin
      if Self.Queue_Count = Max_Queued_Calls
        or else Line'Length > Max_Queued_Bytes - Self.Queue_Bytes
      then
         return False;
      end if;
      Self.Queue ((Self.Queue_First - 1 + Self.Queue_Count) mod Max_Queued_Calls
                  + 1) := (Line => new String'(Line), Id => new String'(Id));
      Self.Queue_Count := Self.Queue_Count + 1;
      Self.Queue_Bytes := Self.Queue_Bytes + Line'Length;
      return True;
   end Enqueue;

   --  Drop the queued call of Id, if one waits: it spends nothing and gets
   --  no answer.  Whether one was dropped.
   function Drop_Queued (Self : in out Server; Id : String) return Boolean is
   begin
      for Offset in 0 .. Self.Queue_Count - 1 loop
         declare
            Call : Queued_Call renames
              Self.Queue ((Self.Queue_First - 1 + Offset) mod Max_Queued_Calls
                          + 1);
         begin
            if Call.Line /= null and then Call.Id.all = Id then
               Self.Queue_Bytes := Self.Queue_Bytes - Call.Line'Length;
               Free (Call.Line);
               return True;
            end if;
         end;
      end loop;
      return False;
   end Drop_Queued;

   procedure Serve_Queued
     (Self  : in out Server;
      Serve : not null access procedure (Line : String)) is
   begin
      while Self.Queue_Count > 0 loop
         declare
            Call : Queued_Call := Self.Queue (Self.Queue_First);
         begin
            Self.Queue (Self.Queue_First) := (null, null);
            Self.Queue_First := Self.Queue_First mod Max_Queued_Calls + 1;
            Self.Queue_Count := Self.Queue_Count - 1;
            if Call.Line /= null then
               Self.Queue_Bytes := Self.Queue_Bytes - Call.Line'Length;
               Serve (Call.Line.all);
               Free (Call.Line);
            end if;
            Free (Call.Id);
         end;
      end loop;
   end Serve_Queued;

   ---------------------------------------------------------------------
   --  The one set of rules

   --  Serve Line, classified into X, by the rules every line is served by.
   --  While a turn waits on its client (Waiting): Pending_Id is the id of
   --  its request in flight, whose response goes to Take, and Turn_Id the
   --  turn's own call; Event says what came of the line for the turn.
   procedure Serve_Line
     (Self       : in out Server;
      X          : in out Exchange;
      Line       : String;
      Waiting    : Boolean;
      Pending_Id : String;
      Turn_Id    : String;
      Take       : access procedure
                     (Reader : Document; Line : String;
                      Result, Error : Node_Id);
      Event      : out Sampling_Port.Wait_Event)
   with Pre => not Waiting or else Take /= null
   is
      Message : constant Classified := Classify (Self, X, Line);
      Members : Envelope renames Message.Members;

      procedure Answer_Error (Problem : Outcome) is
      begin
         Write_Error (X.Answer, Id_Of (X, Line), Problem);
         Send (Self, X.Answer);
      end Answer_Error;
   begin
      Event := Sampling_Port.Served;
      case Message.Kind is
         when Blank =>
            null;
         when Not_Json =>
            Answer_Error (Message.Problem);
            if Waiting then
               --  It may have been the pending request's answer
               Event := Sampling_Port.Not_Json;
            end if;
         when Not_Message =>
            Answer_Error (Message.Problem);
         when Response =>
            if Waiting
              and then Members (Id) /= No_Node
              and then Raw (X.Reader, Line, Members (Id)) = Pending_Id
            then
               Take (X.Reader, Line, Members (Result), Members (Error));
               Event := Sampling_Port.Answered;
            else
               Body_Log.Info
                 ("ignored a response with id "
                  & (if Members (Id) = No_Node then "(none)"
                     else Raw (X.Reader, Line, Members (Id)))
                  & ": no request of the body's waits for it");
            end if;
         when Notification =>
            if Is_Text (X.Reader, Line, Members (Method),
                        "notifications/cancelled")
            then
               declare
                  Named : constant Node_Id :=
                    Field (X.Reader, Line, Members (Params), "requestId");
                  Named_Id : constant String :=
                    (if Named = No_Node then ""
                     else Raw (X.Reader, Line, Named));
               begin
                  if Named = No_Node then
                     null;
                  elsif Waiting and then Named_Id = Turn_Id then
                     Event := Sampling_Port.Turn_Cancelled;
                  elsif Drop_Queued (Self, Named_Id) then
                     Body_Log.Info ("turn " & Named_Id & " cancelled by the"
                                    & " client while queued: not run, not"
                                    & " answered");
                  end if;
                  --  A cancel of anything else names no request in flight:
                  --  ignored, as MCP allows
               end;
            elsif Is_Text (X.Reader, Line, Members (Method),
                           "notifications/initialized")
              and then not Self.Initialized
            then
               Body_Log.Info ("notifications/initialized before initialize;"
                              & " ignored");
            end if;
         when Request =>
            if Waiting
              and then Is_Text (X.Reader, Line, Members (Method), "tools/call")
            then
               --  One turn at a time: it runs once the turn in flight is
               --  answered
               if not Enqueue (Self, Line, Id_Of (X, Line)) then
                  Answer_Error
                    (Failure (Busy_Code, "Server busy:"
                              & Max_Queued_Calls'Image
                              & " calls already wait for the turn in"
                              & " flight"));
               end if;
            else
               Serve_Request (Self, X, Line, Members, Id_Of (X, Line));
               if not X.Silent then
                  Send (Self, X.Answer);
               end if;
            end if;
      end case;
   end Serve_Line;

   procedure Handle (Self : in out Server; Line : String) is
      Event : Sampling_Port.Wait_Event;
   begin
      Serve_Line (Self, Self.Main, Line, Waiting => False, Pending_Id => "",
                  Turn_Id => "", Take => null, Event => Event);
   end Handle;

   overriding procedure Serve_While_Waiting
     (Self       : in out Server;
      Pending_Id : String;
      Turn_Id    : String;
      Deadline   : Monotonic.Instant;
      Take       : not null access procedure
                     (Reader        : Json_Reader.Document;
                      Line          : String;
                      Result, Error : Json_Reader.Node_Id);
      Event      : out Sampling_Port.Wait_Event)
   is
      Outcome  : Client_Channels.Wait_Outcome;
      Overflow : Natural;

      --  Kept, to be served once the channel has returned: the channel is
      --  never entered again from within its own callback
      procedure Keep_Line (Line : String) is
      begin
         if Self.Aside_Line = null or else Self.Aside_Line'Length < Line'Length
         then
            Free (Self.Aside_Line);
            Self.Aside_Line := new String
              (1 .. Natural'Max (Line'Length, 4 * 1024));
         end if;
         Self.Aside_Line (1 .. Line'Length) := Line;
         Self.Aside_Last := Line'Length;
      end Keep_Line;

   begin
      Event := Sampling_Port.Served;
      Self.Client.Await_Line (Deadline, Keep_Line'Access, Outcome, Overflow);
      case Outcome is
         when Client_Channels.Got_Line =>
            Serve_Line
              (Self, Self.Aside, Self.Aside_Line (1 .. Self.Aside_Last),
               Waiting => True, Pending_Id => Pending_Id, Turn_Id => Turn_Id,
               Take => Take, Event => Event);
         when Client_Channels.Got_Overflow =>
            Self.Refuse_Oversized (Overflow);
            Event := Sampling_Port.Oversized;
         when Client_Channels.Timed_Out =>
            Event := Sampling_Port.Timed_Out;
         when Client_Channels.Input_Closed =>
            Event := Sampling_Port.Input_Closed;
      end case;
   end Serve_While_Waiting;

   procedure Answer_Internal_Error (Self : in out Server; Line : String) is
   begin
      Write_Error (Self.Main.Answer, Id_Of (Self.Main, Line),
                   Failure (Internal_Error, "Internal error"));
      Send (Self, Self.Main.Answer);
   end Answer_Internal_Error;

end Hermes_Protocol;
