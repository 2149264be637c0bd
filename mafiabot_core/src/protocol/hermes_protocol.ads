--  JSON-RPC 2.0 over stdio, MCP in both eras: what the body answers to each
--  line it reads.  The body is dual-era: legacy (2024-11-05 .. 2025-11-25)
--  once a client sends `initialize`, modern (2026-07-28) for every request
--  that carries the modern `_meta` protocol version.
--
--  The protocol reads messages and writes replies, nothing else: a `turn`
--  call is the turn service's (Turn_Service), and every message goes out
--  through the client channel given at boot (Client_Channels).
--
--  Every line is classified once, by one classifier, and served by one set
--  of rules, whether it comes between turns or while a turn waits on the
--  client's model (--cognition sampling; the model port hands the protocol
--  its waits, Serve_While_Waiting):
--  - a request is answered at once (ping, tools/list, ...), but a
--    `tools/call` that comes while a turn waits, which is queued and run
--    once the turn is answered (Serve_Queued), in order;
--  - every request gets exactly one response, but a turn the client
--    cancels while it waits on the client's own model and a queued call
--    the client cancels (MCP: a cancelled request gets none; a queued one
--    spends nothing);
--  - notifications get none; responses (id null or not) get none: the
--    response to the model port's pending request is the port's, the
--    others are logged on stderr and dropped.
--  Protocol errors are mapped to JSON-RPC codes here and nowhere else; the
--  protocol's ordering rules are Lifecycle_Checks'.  Anything unexpected
--  while serving one request becomes -32603 for that request alone, at the
--  request loop's edge (Answer_Internal_Error).

with Body_Config;
with Client_Channels;
with Input_Guard;
with Json_Reader;
with Json_Text;
with Monotonic;
with Energy_Gate;
with Organs.Identity;
with Organs.Sets;
with Sampling_Port;
with Turn_Service;
with Turn_Tool;

package Hermes_Protocol is

   Modern_Version : constant String := "2026-07-28";
   Latest_Legacy  : constant String := "2025-11-25";

   type Server is limited new Sampling_Port.Line_Server with private;

   type Server_Access is access all Server;

   procedure Configure
     (Self     : in out Server;
      Settings : Body_Config.Settings;
      Chosen   : Organs.Sets.Organ_Set;
      Identity : Organs.Identity.Big_Three;
      Client   : not null Client_Channels.Channel_Access;
      Turns    : not null Turn_Service.Service_Access)
   with Pre => Organs.Sets.Is_Complete (Chosen)
               and then Turn_Service.Is_Configured (Turns.all);
   --  The identity every result carries (of the Chosen organs), the channel
   --  every message goes out by, and the service every turn is taken by

   Store_Failed : constant := -32_010;
   --  The JSON-RPC error of a turn the session store could not read or
   --  commit: the turn did not happen, and the body serves on

   Busy_Code : constant := -32_000;
   --  A tools/call the queue of calls waiting for the turn in flight has no
   --  room for

   Max_Queued_Calls : constant := 64;
   Max_Queued_Bytes : constant := 16 * 1024 * 1024;
   --  What may wait for the turn in flight: a client sends a few calls
   --  while it waits, not thousands

   procedure Handle (Self : in out Server; Line : String);
   --  Answer one line (LF removed), at most once.  Every refusal is an
   --  answer, not an exception: Handle raises only on a defect of the body
   --  or when memory runs out, before answering, and Self stays fit for the
   --  next line.  The request loop's edge then answers the line with
   --  Answer_Internal_Error.

   procedure Serve_Queued
     (Self  : in out Server;
      Serve : not null access procedure (Line : String));
   --  Call Serve (the request loop's own, Handle within its edge) with each
   --  tools/call queued while a turn waited, in order, until none is left
   --  (a call Serve runs may queue more); a queued call the client
   --  cancelled meanwhile is dropped, unanswered

   procedure Answer_Internal_Error (Self : in out Server; Line : String);
   --  The -32603 answer to the Line that Handle raised on, echoing its id
   --  if Handle had found one valid, else null.  Raises only what the
   --  channel or the allocator raises.

   procedure Refuse_Oversized (Self : in out Server; Length : Natural);
   --  The -32600 answer to a line longer than the configured cap

   overriding procedure Serve_While_Waiting
     (Self       : in out Server;
      Pending_Id : String;
      Turn_Id    : String;
      Deadline   : Monotonic.Instant;
      Take       : not null access procedure
                     (Reader        : Json_Reader.Document;
                      Line          : String;
                      Result, Error : Json_Reader.Node_Id);
      Event      : out Sampling_Port.Wait_Event);
   --  The next line read while the turn of Turn_Id waits on its client,
   --  served by the rules above

private

   type Reply_Shapes is array (Boolean, Energy_Gate.Pass_Count)
     of Json_Text.Template;
   --  The whole reply to a turn, by era (modern or not) and by how many
   --  passes ran, with holes for the turn's values: written the first time
   --  such a turn is answered

   type Exchange is limited record
      Reader    : Json_Reader.Document;
      Answer    : Json_Text.Builder;
      --  Reused for every message: the parsed line and the reply
      Answering : Json_Reader.Node_Id := Json_Reader.No_Node;
      --  The id of the request being answered, once found to be one
      --  JSON-RPC allows: what an internal error's answer echoes
      Silent    : Boolean := False;
      --  The request being handled gets no response (a cancelled turn)
   end record;
   --  What one message is read and answered with.  Two: the line being
   --  handled (Main), and the lines served while its turn waits on the
   --  client (Aside), so that those never overwrite the turn's own.

   type Text_Access is access String;

   type Queued_Call is record
      Line : Text_Access;
      --  null once the client cancelled it
      Id   : Text_Access;
      --  Its id, as sent
   end record;

   type Queued_Calls is array (1 .. Max_Queued_Calls) of Queued_Call;

   type Server is limited new Sampling_Port.Line_Server with record
      Limits        : Input_Guard.Limits := (64, 1_000_000);
      Max_Line      : Positive := 4 * 1024 * 1024;
      Initialized   : Boolean := False;
      --  A legacy `initialize` has been answered
      Client_Samples : Boolean := False;
      --  The legacy client declared capabilities.sampling in initialize
      Main, Aside   : Exchange;
      Aside_Line    : Text_Access;
      Aside_Last    : Natural := 0;
      --  Aside_Line (1 .. Aside_Last): the line read while a turn waits,
      --  served once the channel has returned it
      Identity      : Turn_Tool.Result_Identity;
      Replies       : Reply_Shapes := [others => [others => Json_Text.No_Template]];
      --  The templates every turn's reply is filled into
      Origin_Replies : Reply_Shapes :=
        [others => [others => Json_Text.No_Template]];
      --  The same, for a call that gave key_origin (its session.origin)
      Client        : Client_Channels.Channel_Access;
      Turns         : Turn_Service.Service_Access;
      Queue         : Queued_Calls;
      Queue_First   : Positive := 1;
      Queue_Count   : Natural := 0;
      Queue_Bytes   : Natural := 0;
      --  A ring: Queue_Count calls from Queue_First on
   end record;

end Hermes_Protocol;
