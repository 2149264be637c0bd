with Ada.Exceptions;
with Ada.Strings.Unbounded;
with Body_Log;
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

   type Method_Kind is
     (Initialize, Ping, Discover, Tools_List, Tools_Call, Unknown);

   function Method_Of (Name : String) return Method_Kind is
     (if Name = "initialize" then Initialize
      elsif Name = "ping" then Ping
      elsif Name = "server/discover" then Discover
      elsif Name = "tools/list" then Tools_List
      elsif Name = "tools/call" then Tools_Call
      else Unknown);

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
      Identity : Organs.Identity.Big_Three) is
   begin
      Self.Limits := (Max_Depth => Settings.Max_Depth,
                      Max_Elements => Settings.Max_Elements);
      Self.Max_Line := Settings.Max_Line_Bytes;
      Self.Chosen := Chosen;
      Self.Curve := Curve;
      Turn_Tool.Set_Identity (Self.Identity, Chosen, Identity);
      Turn_Tool.Set_Text_Block (Self.Identity, Settings.Text_Block);
      --  The replies carry the identity: they are written again
      for Era_Shapes of Self.Replies loop
         Json_Text.Free (Era_Shapes);
      end loop;
      Self.Sessions.Set_Capacity (Settings.Max_Sessions);
   end Configure;

   procedure Send (Json : in out Json_Text.Builder; Reply : Reply_Sink) is
   begin
      Json.End_Line;
      Json.Query (Reply);
   end Send;

   procedure Refuse_Oversized
     (Self : in out Server; Length : Natural; Reply : Reply_Sink) is
   begin
      Write_Error
        (Self.Answer, Null_Id,
         Failure (Invalid_Request,
                  "Invalid Request: line of" & Length'Image
                  & " bytes exceeds the limit of" & Self.Max_Line'Image
                  & " bytes (--max-line-bytes)"));
      Send (Self.Answer, Reply);
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
   procedure Close_Result (Json : in out Json_Text.Builder; Modern : Boolean)
   is
   begin
      if Modern then
         Json.Text_Field ("resultType", "complete");
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

   function Text_Member
     (Self : Server; Line : String; Object : Node_Id; Name : String)
      return String is
     (Text_Of (Self, Line, Field (Self, Line, Object, Name)));

   procedure Answer_Initialize
     (Self : in out Server; Line : String; Params : Node_Id; Id : String;
      Problem : out Outcome; Json : in out Json_Text.Builder)
   is
      Asked : constant String :=
        Text_Member (Self, Line, Params, "protocolVersion");
   begin
      if Self.Initialized then
         Problem := Failure (Invalid_Request,
                             "Invalid Request: already initialized");
         return;
      elsif Asked = "" then
         Problem := Failure (Invalid_Params, "Invalid params: initialize"
                             & " needs protocolVersion (a string)");
         return;
      end if;
      Self.Initialized := True;
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
     (Self : Server; Line : String; Params : Node_Id; Id : String;
      Modern : Boolean; Problem : out Outcome;
      Json : in out Json_Text.Builder) is
   begin
      if Field (Self, Line, Params, "cursor") /= No_Node then
         Problem := Failure (Invalid_Params, "Invalid params: unknown cursor"
                             & " (the tool list has a single page)");
         return;
      end if;
      Open_Result (Json, Id);
      Json.Key ("tools");
      Json.Start_Array;
      Turn_Tool.Write_Definition (Json);
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
     (Self : in out Server; Passes : Energy_Gate.Pass_Count; Modern : Boolean)
      return Json_Text.Template
   is
      use type Json_Text.Template;
   begin
      if Self.Replies (Modern, Passes) = Json_Text.No_Template then
         declare
            Json : Json_Text.Builder;
         begin
            Start_Envelope (Json);
            Json.Hole (Json_Text.Raw_Hole);
            Json.Key ("result");
            Json.Start_Object;
            Turn_Tool.Write_Result_Shape (Json, Self.Identity, Passes);
            Close_Result (Json, Modern);
            Self.Replies (Modern, Passes) := Json.To_Template;
         end;
      end if;
      return Self.Replies (Modern, Passes);
   end Reply_Shape;

   procedure Answer_Tools_Call
     (Self : in out Server; Line : String; Params : Node_Id; Id : String;
      Modern : Boolean; Problem : out Outcome;
      Json : in out Json_Text.Builder)
   with No_Inline;
   --  Its frame holds a turn's trace (17 KB), probed page by page on entry
   --  (-fstack-check): inlined, every request would enter it, and start-up
   --  (spawn to initialize answered) would take four more page faults

   procedure Answer_Tools_Call
     (Self : in out Server; Line : String; Params : Node_Id; Id : String;
      Modern : Boolean; Problem : out Outcome;
      Json : in out Json_Text.Builder)
   is
      Tool : constant String := Text_Member (Self, Line, Params, "name");
   begin
      if Tool = "" then
         Problem := Failure (Invalid_Params, "Invalid params: tools/call"
                             & " needs name (a string)");
         return;
      elsif Tool /= Turn_Tool.Name then
         Problem := Failure (Invalid_Params, "Unknown tool: " & Tool);
         return;
      end if;

      declare
         Request : constant Turn_Tool.Turn_Request :=
           Turn_Tool.Check_Arguments
             (Self.Reader, Line, Field (Self, Line, Params, "arguments"));
      begin
         if not Request.Valid then
            Open_Result (Json, Id);
            Turn_Tool.Write_Refusal (Json, To_String (Request.Problem));
            Close_Result (Json, Modern);
            return;
         end if;
         declare
            function Value (Field : Turn_Tool.Argument) return String is
              (Turn_Tool.Value (Self.Reader, Line, Request, Field));
            Uid     : constant String := Value (Turn_Tool.Uid);
            Channel : constant String := Value (Turn_Tool.Channel);
            Server  : constant String := Value (Turn_Tool.Server);
            Key     : constant String :=
              Session_Keys.Key_Of (Uid, Channel, Server);
            Session : Session_Table.Session_Access;
            Trace   : Turn_Cycle.Turn_Trace;
         begin
            Self.Sessions.Open (Self.Chosen, Key, Session);
            Turn_Cycle.Run (Self.Chosen, Self.Curve, Session.all,
                            Uid, Channel, Server, Value (Turn_Tool.Input),
                            Trace);
            Json.Start_Filling (Reply_Shape (Self, Trace.Passes, Modern));
            Json.Fill_Raw (Id);
            Turn_Tool.Fill_Result (Json, Self.Identity, Trace);
         end;
      end;
   end Answer_Tools_Call;

   ---------------------------------------------------------------------
   --  One message

   type Envelope_Member is (Jsonrpc, Id, Method, Params, Result, Error);

   type Envelope is array (Envelope_Member) of Node_Id;
   --  The members of a message JSON-RPC defines, No_Node for those it
   --  lacks; of duplicates the last, as Member finds

   Envelope_Names : constant Json_Reader.Name_List :=
     [new String'("jsonrpc"), new String'("id"), new String'("method"),
      new String'("params"), new String'("result"), new String'("error")];

   --  Message's members, found in one walk over them
   function Envelope_Of (Self : Server; Line : String; Message : Node_Id)
     return Envelope
   with Pre => Is_Object (Self, Message)
   is
      Found   : Member_Values (Envelope_Names'Range);
      Unknown : Node_Id;
   begin
      --  Members JSON-RPC does not define are left alone
      Find_Members (Self.Reader, Line, Message, Envelope_Names, Found, Unknown);
      return [for Member in Envelope_Member =>
                Found (Envelope_Member'Pos (Member) + 1)];
   end Envelope_Of;

   --  Write the response to a request into Self.Answer.
   procedure Serve_Request
     (Self : in out Server; Line : String; Members : Envelope; Id : String)
   is
      Method_Name : constant String :=
        Text_Of (Self, Line, Members (Method));
      Method  : constant Method_Kind := Method_Of (Method_Name);
      Params  : constant Node_Id := Members (Hermes_Protocol.Params);
      Meta    : constant Node_Id := Field (Self, Line, Params, "_meta");
      Json    : Json_Text.Builder renames Self.Answer;
      Problem : Outcome;
      Modern  : Boolean := False;
   begin
      if Params /= No_Node and then not Is_Object (Self, Params) then
         Problem := Failure (Invalid_Params,
                             "Invalid params: params must be an object");
      elsif Method = Unknown then
         Problem := Failure
           (Method_Not_Found, "Method not found: " & Method_Name);
      else
         if Field (Self, Line, Meta, Version_Key) /= No_Node then
            declare
               Asked : constant String :=
                 Text_Member (Self, Line, Meta, Version_Key);
            begin
               Modern := True;
               if Asked /= Modern_Version then
                  Problem := Failure
                    (Unsupported_Version, "Unsupported protocol version",
                     "{""supported"":[" & Json_Text.Quoted (Modern_Version)
                     & "],""requested"":"
                     & (if Asked = "" then "null"
                        else Json_Text.Quoted (Asked)) & "}");
               elsif not Is_Object
                           (Self, Field (Self, Line, Meta, Capabilities_Key))
               then
                  Problem := Failure
                    (Invalid_Params, "Invalid params: _meta needs "
                     & Capabilities_Key & " (an object)");
               end if;
            end;
         end if;

         if not Problem.Failed
           and then not Modern
           and then not Self.Initialized
           and then Method not in Initialize | Ping | Discover
         then
            Problem := Failure
              (Invalid_Request, "Invalid Request: not initialized (send"
               & " initialize first, or use protocol version "
               & Modern_Version & " in _meta)");
         end if;

         if not Problem.Failed then
            case Method is
               when Initialize =>
                  Answer_Initialize (Self, Line, Params, Id, Problem, Json);
               when Ping =>
                  Open_Result (Json, Id);
                  Close_Result (Json, Modern);
               when Discover =>
                  Answer_Discover (Id, Json);
               when Tools_List =>
                  Answer_Tools_List
                    (Self, Line, Params, Id, Modern, Problem, Json);
               when Tools_Call =>
                  Answer_Tools_Call
                    (Self, Line, Params, Id, Modern, Problem, Json);
               when Unknown =>
                  null;
            end case;
         end if;
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
      --  notifications/cancelled always names a finished request: ignored.
   end Serve_Notification;

   function Is_Blank (Line : String) return Boolean is
     (for all C of Line => C in ' ' | ASCII.HT | ASCII.CR);

   procedure Handle (Self : in out Server; Line : String; Reply : Reply_Sink)
   is
      Id_Node : Node_Id := No_Node;
      --  The request's id, once found to be one JSON-RPC allows

      --  The id a response echoes: as it was sent, or null
      function Id return String is
        (if Id_Node = No_Node then Null_Id
         else Raw (Self.Reader, Line, Id_Node));

      procedure Answer_Error (Problem : Outcome) is
      begin
         Write_Error (Self.Answer, Id, Problem);
         Send (Self.Answer, Reply);
      end Answer_Error;
   begin
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
               --  A response: the body sends no requests, so nothing waits
               --  for it, and responses are never answered.
               Body_Log.Info ("ignored a response to no request of ours");
               return;
            else
               Id_Node := Members (Hermes_Protocol.Id);
               if Text_Of (Self, Line, Members (Jsonrpc)) /= "2.0" then
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
               Send (Self.Answer, Reply);
            end if;
         end;
      end;
   exception
      --  The edge of one request: whatever went wrong stays with it, and the
      --  process keeps serving.
      when E : others =>
         Body_Log.Error ("internal error: "
                         & Ada.Exceptions.Exception_Information (E));
         Answer_Error (Failure (Internal_Error, "Internal error"));
   end Handle;

end Hermes_Protocol;
