with Monotonic;
with Ada.Strings.Unbounded;
with Body_Log;
with Lifecycle_Checks;
with Organs.Model_Port;
with Session_Keys;
with Turn_Cycle;

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
      Curve    : Energy_Gate.Threshold_Curve;
      Identity : Organs.Identity.Big_Three)
   is
      use type Body_Config.Cognition_Kind;
   begin
      Self.Limits := (Max_Depth => Settings.Max_Depth,
                      Max_Elements => Settings.Max_Elements);
      Self.Max_Line := Settings.Max_Line_Bytes;
      Self.Chosen := Chosen;
      Self.Curve := Curve;
      Turn_Tool.Set_Identity (Self.Identity, Chosen, Identity);
      Turn_Tool.Set_Text_Block (Self.Identity, Settings.Text_Block);
      Turn_Tool.Set_Cognition (Self.Identity, Settings.Cognition);
      Self.Cognition := Settings.Cognition;
      Self.Turn_Deadline := Settings.Turn_Deadline_Ms;
      if Settings.Cognition = Body_Config.Sampling and then Self.Port = null
      then
         Self.Port := new Sampling_Port.Channel_Port;
         Self.Replay := new Sampling_Port.Replay_Port;
      end if;
      --  The replies carry the identity: they are written again
      for Era_Shapes of Self.Replies loop
         Json_Text.Free (Era_Shapes);
      end loop;
      Self.Sessions.Set_Capacity (Settings.Max_Sessions);
   end Configure;

   procedure Keep_Sessions_In_Store
     (Self     : in out Server;
      Settings : Body_Config.Settings;
      Result   : out Session_Store.Outcome)
   is
      use type Body_Config.State_Durability;
   begin
      Self.Store.Open
        (Path            => To_String (Settings.State_Path),
         Capacity        => Settings.Max_Sessions,
         Busy_Timeout_Ms => Settings.State_Busy_Ms,
         Full_Sync       => Settings.State_Sync = Body_Config.Full,
         Result          => Result);
   end Keep_Sessions_In_Store;

   procedure Close_Store (Self : in out Server) is
   begin
      if Self.Store.Is_Open then
         Self.Store.Close;
      end if;
   end Close_Store;

   procedure Send (Json : in out Json_Text.Builder; Reply : Reply_Sink) is
   begin
      Json.End_Line;
      Json.Query (Reply);
   end Send;

   procedure Refuse_Oversized
     (Self : in out Server; Length : Natural; Reply : Reply_Sink)
   is
      --  Not Self.Answer: a line read while a turn waits on the client
      --  (--cognition sampling) is refused while the turn's reply is
      --  being made there
      Json : Json_Text.Builder;
   begin
      Write_Error
        (Json, Null_Id,
         Failure (Invalid_Request,
                  "Invalid Request: line of" & Length'Image
                  & " bytes exceeds the limit of" & Self.Max_Line'Image
                  & " bytes (--max-line-bytes)"));
      Send (Json, Reply);
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

   --  Reading the parsed message.  Line is the line Self.Reader parsed;
   --  a missing or mistyped value reads as No_Node or "".

   function Field
     (Self : Server; Line : String; Object : Node_Id; Name : String)
      return Node_Id is
     (if Object /= No_Node and then Kind (Self.Reader, Object) = Object_Value
      then Member (Self.Reader, Line, Object, Name) else No_Node);

   function Is_Object (Self : Server; Node : Node_Id) return Boolean is
     (Node /= No_Node and then Kind (Self.Reader, Node) = Object_Value);

   function Text_Of (Self : Server; Line : String; Node : Node_Id)
     return String is
     (if Node /= No_Node and then Kind (Self.Reader, Node) = String_Value
      then Text (Self.Reader, Line, Node) else "");

   --  Whether Text_Of (Self, Line, Node) = Value, without a copy of it
   function Is_Text
     (Self : Server; Line : String; Node : Node_Id; Value : String)
      return Boolean is
     (Node /= No_Node and then Kind (Self.Reader, Node) = String_Value
      and then Text_Is (Self.Reader, Line, Node, Value));

   function Text_Member
     (Self : Server; Line : String; Object : Node_Id; Name : String)
      return String is
     (Text_Of (Self, Line, Field (Self, Line, Object, Name)));

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
   function Members_Of (Self : Server; Line : String; Object : Node_Id)
     return Member_Set;
   --  Object's members named by Names, as Member finds them (of duplicates
   --  the last); No_Node for those it lacks, and for all of them when
   --  Object is not an object.  Members not in Names are left alone.

   function Members_Of (Self : Server; Line : String; Object : Node_Id)
     return Member_Set
   is
      pragma Compile_Time_Error
        (Member_Kind'Pos (Member_Kind'Last) - Member_Kind'Pos
           (Member_Kind'First) + 1 /= Names'Length,
         "every member kind needs its name");
      Found   : Member_Values (Names'Range);
      Unknown : Node_Id;
   begin
      if not Is_Object (Self, Object) then
         return [others => No_Node];
      end if;
      Find_Members (Self.Reader, Line, Object, Set, Found, Unknown);
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
     (Self : in out Server; Line : String; Params : Params_Members;
      Id : String; Problem : out Outcome; Json : in out Json_Text.Builder)
   is
      Asked : constant String :=
        Text_Of (Self, Line, Params (Protocol_Version));
   begin
      if Asked = "" then
         Problem := Failure (Invalid_Params, "Invalid params: initialize"
                             & " needs protocolVersion (a string)");
         return;
      end if;
      Self.Initialized := True;
      Self.Client_Samples :=
        Is_Object (Self, Field (Self, Line, Params (Capabilities), "sampling"));
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
      Sampled : Boolean) is
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
        (Json, Sampled => Sampled);
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
     (Self : in out Server; Line : String; Params : Params_Members;
      Id : String; Modern : Boolean; Problem : out Outcome;
      Json : in out Json_Text.Builder)
   with No_Inline;
   --  The turn it runs (Run_Turn, within it) holds a turn's trace (24 KB)
   --  in its frame, probed page by page on entry (-fstack-check): inlined,
   --  every request would enter it, and start-up
   --  (spawn to initialize answered) would take four more page faults

   --  Whether Self.Port can ask the client's model: a legacy client that
   --  declared capabilities.sampling can be asked; a modern request cannot
   --  (its form is input-required, not sent here)
   function Port_Reaches_Client (Self : Server; Modern : Boolean)
     return Boolean is (not Modern and then Self.Client_Samples);

   --  A turn whose cognition may ask the client's model, over Self.Port
   procedure Run_Sampled_Turn
     (Self                 : in out Server;
      Session              : in out Session_Table.Session;
      Uid, Channel, Server : String;
      Input                : String;
      Id                   : String;
      Modern               : Boolean;
      Trace                : out Turn_Cycle.Turn_Trace)
   is
   begin
      Self.Port.Open
        (Reach         =>
           (if Port_Reaches_Client (Self, Modern)
            then Organs.Model_Port.Reachable
            else Organs.Model_Port.No_Capability),
         Turn_Id       => Id,
         Turn_Deadline => Monotonic.After (Self.Turn_Deadline),
         Limits        => Self.Limits);
      Turn_Cycle.Run (Self.Chosen, Self.Curve, Session, Uid, Channel, Server,
                      Input, Self.Port.all, Trace);
   end Run_Sampled_Turn;

   --  One round of a 2026-07-28 sampled turn (Sampling_Port.Replay_Port):
   --  the turn runs on a copy of Session, with the answers of the rounds
   --  before replayed; it is Session's turn only once no call waits
   procedure Run_Replayed_Round
     (Self                 : in out Server;
      Line                 : String;
      Params               : Params_Members;
      Session              : in out Session_Table.Session;
      Key                  : String;
      Uid, Channel, Server : String;
      Input                : String;
      Problem              : out Outcome;
      Trace                : out Turn_Cycle.Turn_Trace)
   is
      Valid   : Boolean;
      Scratch : Session_Table.Session := Session;
   begin
      Self.Replay.Resume
        (Call_Key  => Key & ASCII.LF & Input,
         State     => Text_Of (Self, Line, Params (Request_State)),
         Responses =>
           (if Params (Input_Responses) = No_Node then ""
            else Raw (Self.Reader, Line, Params (Input_Responses))),
         Limits    => Self.Limits,
         Valid     => Valid);
      if not Valid then
         Problem := Failure
           (Invalid_Params, "Invalid params: requestState is not one the"
            & " body gave for this call");
         return;
      end if;
      Turn_Cycle.Run (Self.Chosen, Self.Curve, Scratch, Uid, Channel, Server,
                      Input, Self.Replay.all, Trace);
      if not Self.Replay.Needs_Input then
         Session := Scratch;
      end if;
   end Run_Replayed_Round;

   procedure Answer_Tools_Call
     (Self : in out Server; Line : String; Params : Params_Members;
      Id : String; Modern : Boolean; Problem : out Outcome;
      Json : in out Json_Text.Builder)
   is
   begin
      if not Is_Text (Self, Line, Params (Tool_Name), Turn_Tool.Name) then
         declare
            --  Copied only to be refused
            Tool : constant String := Text_Of (Self, Line, Params (Tool_Name));
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
           Turn_Tool.Check_Arguments
             (Self.Reader, Line, Params (Arguments));
      begin
         if not Request.Valid then
            Open_Result (Json, Id);
            Turn_Tool.Write_Refusal (Json, To_String (Request.Problem));
            Close_Result (Json, Modern);
            return;
         end if;
         declare
            procedure Run_Turn (Input, Uid, Channel, Server, Origin : String)
            is
               Key     : constant String :=
                 Session_Keys.Key_Of (Uid, Channel, Server);
               Trace   : Turn_Cycle.Turn_Trace;
               Stored  : Session_Store.Outcome;

               type Turn_End is (Answered, Refused, Needs_Input, Cancelled);
               Ended : Turn_End := Answered;

               type Thinker is (Stub, Replayed_Round, Sampled);
               --  Who thinks the turn: the stub, or the client's model in
               --  a round of the 2026-07-28 form or over Self.Port

               Thought_By : constant Thinker :=
                 (case Self.Cognition is
                     when Body_Config.Stub => Stub,
                     when Body_Config.Sampling =>
                       (if Modern
                          and then Is_Object
                            (Self, Field (Self, Line,
                                          Field (Self, Line, Params (Meta),
                                                 Capabilities_Key),
                                          "sampling"))
                        then Replayed_Round else Sampled));

               Waits_On_Client : constant Boolean :=
                 Thought_By = Sampled
                 and then Port_Reaches_Client (Self, Modern);
               --  Up to the turn's deadline: too long to hold the store's
               --  write lock from the other bodies meanwhile

               --  The cycle over Session, thought by the body's cognition
               procedure Think (Session : in out Session_Table.Session) is
               begin
                  case Thought_By is
                     when Stub =>
                        Turn_Cycle.Run (Self.Chosen, Self.Curve, Session,
                                        Uid, Channel, Server, Input, Trace);
                     when Replayed_Round =>
                        --  The 2026-07-28 form: one round of the client's
                        --  per call, each on a copy of the session but the
                        --  last
                        Run_Replayed_Round
                          (Self, Line, Params, Session, Key, Uid, Channel,
                           Server, Input, Problem, Trace);
                        Ended :=
                          (if Problem.Failed then Refused
                           elsif Self.Replay.Needs_Input then Needs_Input
                           else Answered);
                     when Sampled =>
                        Run_Sampled_Turn
                          (Self, Session, Uid, Channel, Server, Input, Id,
                           Modern, Trace);
                        if Self.Port.Was_Cancelled then
                           Ended := Cancelled;
                        end if;
                  end case;
               end Think;
            begin
               if Self.Store.Is_Open then
                  declare
                     Held : Session_Table.Session;
                  begin
                     if Waits_On_Client then
                        --  No lock held while the turn waits: the commit
                        --  takes it, and is refused if another body turned
                        --  the session meanwhile
                        Self.Store.Begin_Long_Turn
                          (Self.Chosen, Key, Held, Stored);
                     else
                        Self.Store.Begin_Turn (Self.Chosen, Key, Held, Stored);
                     end if;
                     if not Stored.Failed then
                        Think (Held);
                        if Ended = Refused then
                           --  Nothing of the turn happened: release the
                           --  write lock now, not at this body's next turn
                           Self.Store.Abandon_Turn;
                        elsif Waits_On_Client then
                           Self.Store.Commit_Long_Turn (Key, Held, Stored);
                        else
                           --  Committed before the reply exists: a reply a
                           --  client reads is never undone by a crash
                           Self.Store.Commit_Turn (Key, Held, Stored);
                        end if;
                     end if;
                  end;
                  if Stored.Failed then
                     Body_Log.Error (Session_Store.Diagnostic (Stored));
                     --  A cancelled turn gets no response, not even the
                     --  store's error: it goes on to be silenced below
                     if Ended /= Cancelled then
                        Problem := Failure
                          (Store_Failed, "Session store failed: "
                           & To_String (Stored.Reason));
                        return;
                     end if;
                  end if;
               else
                  declare
                     Session : Session_Table.Session_Access;
                  begin
                     Self.Sessions.Open (Self.Chosen, Key, Session);
                     Think (Session.all);
                  end;
               end if;
               case Ended is
                  when Answered =>
                     Json.Start_Filling
                       (Reply_Shape (Self, Trace.Passes, Modern, Origin /= ""));
                     Json.Fill_Raw (Id);
                     Turn_Tool.Fill_Result
                       (Json, Self.Identity, Trace, Origin => Origin);
                  when Refused =>
                     null;
                  when Needs_Input =>
                     Open_Result (Json, Id);
                     Self.Replay.Write_Input_Required (Json);
                     Close_Result (Json, Modern, "input_required");
                  when Cancelled =>
                     --  MCP: a cancelled request gets no response
                     Self.Silent := True;
                     Body_Log.Info ("turn " & Id & " cancelled by the"
                                    & " client: not answered");
               end case;
            end Run_Turn;
         begin
            Turn_Tool.Read_Values (Self.Reader, Line, Request,
                                   Run_Turn'Access);
         end;
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

   --  Write the response to a request into Self.Answer: what the
   --  lifecycle allows is dispatched on its method, the rest refused
   procedure Serve_Request
     (Self : in out Server; Line : String; Members : Envelope; Id : String)
   is
      package Lifecycle renames Lifecycle_Checks;
      use type Lifecycle.Method_Kind;

      Method_Name : constant String :=
        Text_Of (Self, Line, Members (Method));
      Method  : constant Lifecycle.Method_Kind :=
        Lifecycle.Method_Of (Method_Name);
      Params  : constant Node_Id := Members (Hermes_Protocol.Params);
      Given   : constant Params_Members := Params_Of (Self, Line, Params);
      Meta    : constant Node_Id := Given (Hermes_Protocol.Meta);
      Claimed : constant Boolean :=
        Field (Self, Line, Meta, Version_Key) /= No_Node;
      Asked   : constant String :=
        (if Claimed then Text_Member (Self, Line, Meta, Version_Key) else "");
      Json    : Json_Text.Builder renames Self.Answer;
      Problem : Outcome;
   begin
      if Params /= No_Node and then not Is_Object (Self, Params) then
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
                      (Self, Field (Self, Line, Meta, Capabilities_Key))));
            Modern : constant Boolean := Verdict.Is_Modern;
         begin
            case Verdict.Outcome is
               when Lifecycle.Allowed =>
                  case Method is
                     when Lifecycle.Initialize =>
                        Answer_Initialize
                          (Self, Line, Given, Id, Problem, Json);
                     when Lifecycle.Ping =>
                        Open_Result (Json, Id);
                        Close_Result (Json, Modern);
                     when Lifecycle.Discover =>
                        Answer_Discover (Id, Json);
                     when Lifecycle.Tools_List =>
                        Answer_Tools_List
                          (Given, Id, Modern, Problem, Json,
                           Turn_Tool.Is_Sampled (Self.Identity));
                     when Lifecycle.Tools_Call =>
                        Answer_Tools_Call
                          (Self, Line, Given, Id, Modern, Problem, Json);
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

   procedure Serve_Notification (Self : in out Server; Method : String) is
   begin
      if Method = "notifications/initialized" and then not Self.Initialized
      then
         Body_Log.Info ("notifications/initialized before initialize;"
                        & " ignored");
      end if;
      --  Requests are answered before the next line is read, so a
      --  notifications/cancelled here always names a finished request:
      --  ignored.  (One for a sampled turn in flight is read by the model
      --  port, Sampling_Port.)
   end Serve_Notification;

   function Is_Blank (Line : String) return Boolean is
     (for all C of Line => C in ' ' | ASCII.HT | ASCII.CR);

   --  The id a response to Line echoes: as it was sent, or null
   function Id_Of (Self : Server; Line : String) return String is
     (if Self.Answering = No_Node then Null_Id
      else Raw (Self.Reader, Line, Self.Answering));

   procedure Handle (Self : in out Server; Line : String; Reply : Reply_Sink)
   is
      function Id return String is (Id_Of (Self, Line));

      procedure Answer_Error (Problem : Outcome) is
      begin
         Write_Error (Self.Answer, Id, Problem);
         Send (Self.Answer, Reply);
      end Answer_Error;
   begin
      Self.Answering := No_Node;
      Self.Silent := False;
      Self.Answer.Reset;
      if Is_Blank (Line) then
         return;
      end if;

      --  One pass reads the line and holds it to the guard's rules; only a
      --  refused line is inspected, for the guard's findings come first.
      Self.Reader.Parse (Line, Self.Limits);
      if not Self.Reader.Is_Valid then
         declare
            Verdict : constant Input_Guard.Verdict :=
              Input_Guard.Inspect (Line, Self.Limits);
         begin
            if Verdict.Kind /= Input_Guard.Clean then
               Answer_Error (Guard_Failure (Verdict, Line'First, Self));
            else
               Answer_Error
                 (Failure (Parse_Error, "Parse error: "
                           & Self.Reader.Error_Message & " at column"
                           & Self.Reader.Error_Column'Image));
            end if;
         end;
         return;
      end if;

      declare
         Message : constant Node_Id := Self.Reader.Root;
      begin
         case Kind (Self.Reader, Message) is
            when Array_Value =>
               Answer_Error
                 (Failure (Invalid_Request, "Invalid Request: batches are not"
                           & " supported (MCP removed JSON-RPC batching in"
                           & " 2025-06-18)"));
               return;
            when Object_Value =>
               null;
            when others =>
               Answer_Error
                 (Failure (Invalid_Request, "Invalid Request: a message must"
                           & " be a JSON object"));
               return;
         end case;

         declare
            Members : constant Envelope := Envelope_Of (Self, Line, Message);
            Has_Id  : constant Boolean := Members (Hermes_Protocol.Id) /= No_Node;
            Method  : constant Node_Id := Members (Hermes_Protocol.Method);
            Problem : Outcome;
         begin
            if Has_Id
              and then Kind (Self.Reader, Members (Hermes_Protocol.Id))
                       not in Number_Value | String_Value
            then
               Problem := Failure
                 (Invalid_Request, "Invalid Request: id must be a string"
                  & " or a number");
            elsif Method = No_Node
              and then Has_Id
              and then (Members (Result) /= No_Node
                        or else Members (Error) /= No_Node)
            then
               --  A response no request waits for (the model port reads the
               --  responses to the body's own requests while they wait):
               --  responses are never answered.
               Body_Log.Info ("ignored a response to no request of ours");
               return;
            else
               Self.Answering := Members (Hermes_Protocol.Id);
               if not Is_Text (Self, Line, Members (Jsonrpc), "2.0") then
                  Problem := Failure
                    (Invalid_Request,
                     "Invalid Request: jsonrpc must be ""2.0""");
               elsif Method = No_Node
                 or else Kind (Self.Reader, Method) /= String_Value
               then
                  Problem := Failure
                    (Invalid_Request,
                     "Invalid Request: method must be a string");
               end if;
            end if;

            if Problem.Failed then
               Answer_Error (Problem);
            elsif not Has_Id then
               Serve_Notification (Self, Text_Of (Self, Line, Method));
            else
               Serve_Request (Self, Line, Members, Id);
               if not Self.Silent then
                  Send (Self.Answer, Reply);
               end if;
            end if;
         end;
      end;
   end Handle;

   procedure Answer_Internal_Error
     (Self : in out Server; Line : String; Reply : Reply_Sink) is
   begin
      --  A turn that raised mid-way holds the store's write lock: release
      --  it now, not at this body's next turn
      Self.Store.Abandon_Turn;
      Write_Error (Self.Answer, Id_Of (Self, Line),
                   Failure (Internal_Error, "Internal error"));
      Send (Self.Answer, Reply);
   end Answer_Internal_Error;

end Hermes_Protocol;
