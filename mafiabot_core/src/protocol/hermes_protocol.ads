--  JSON-RPC 2.0 over stdio, MCP in both eras: what the body answers to each
--  line it reads.  The body is dual-era: legacy (2024-11-05 .. 2025-11-25)
--  once a client sends `initialize`, modern (2026-07-28) for every request
--  that carries the modern `_meta` protocol version.
--
--  Every request gets exactly one response, but a turn the client cancels
--  while it waits on the client's own model (--cognition sampling), which
--  MCP says gets none; notifications and client responses get none.  While
--  such a turn waits, the lines the client sends are read by the model port
--  (Sampling_Port), which sets aside what is not its business: they reach
--  Handle after the turn is answered, in order.  Protocol errors are mapped to JSON-RPC codes here
--  and nowhere else; the protocol's ordering rules are Lifecycle_Checks'.
--  Anything unexpected while serving one request becomes -32603 for that
--  request alone, at the request loop's edge (Answer_Internal_Error).

with Body_Config;
with Energy_Gate;
with Input_Guard;
with Json_Reader;
with Json_Text;
with Organs.Identity;
with Organs.Sets;
with Sampling_Port;
with Session_Store;
with Session_Table;
with Turn_Tool;

package Hermes_Protocol is

   Modern_Version : constant String := "2026-07-28";
   Latest_Legacy  : constant String := "2025-11-25";

   type Server is tagged limited private;

   procedure Configure
     (Self     : in out Server;
      Settings : Body_Config.Settings;
      Chosen   : Organs.Sets.Organ_Set;
      Curve    : Energy_Gate.Threshold_Curve;
      Identity : Organs.Identity.Big_Three)
   with Pre => Organs.Sets.Is_Complete (Chosen)
               and then Energy_Gate.Is_Valid (Curve);
   --  The organs every turn runs through, the energy gate's curve, and the
   --  identity every result carries

   procedure Keep_Sessions_In_Store
     (Self     : in out Server;
      Settings : Body_Config.Settings;
      Result   : out Session_Store.Outcome);
   --  Keep every session in the store Settings.State_Path (not empty)
   --  names instead of in memory (--state): each turn reads its session
   --  from the store and commits it there before its reply is written; a
   --  turn the store fails is answered Store_Failed.  A turn that waits on
   --  the client's model is a long turn of the store (no lock held while
   --  it waits), the others short ones.  Result.Failed when the store
   --  cannot be used: nothing is served from it then.

   procedure Close_Store (Self : in out Server);
   --  At the end of input: the store, if any, is closed cleanly

   Store_Failed : constant := -32_010;
   --  The JSON-RPC error of a turn the session store could not read or
   --  commit: the turn did not happen, and the body serves on

   type Reply_Sink is not null access procedure (Message : String);
   --  Where a reply goes: one whole message, LF included

   procedure Handle (Self : in out Server; Line : String; Reply : Reply_Sink);
   --  Answer one line (LF removed), calling Reply at most once.  Every
   --  refusal is an answer, not an exception: Handle raises only on a
   --  defect of the body or when memory runs out, before calling Reply, and
   --  Self stays fit for the next line.  The request loop's edge then
   --  answers the line with Answer_Internal_Error.

   procedure Answer_Internal_Error
     (Self : in out Server; Line : String; Reply : Reply_Sink);
   --  The -32603 answer to the Line that Handle raised on, echoing its id
   --  if Handle had found one valid, else null; a turn it left open on the
   --  session store is rolled back first.  Raises only what Reply or the
   --  allocator raises.

   procedure Refuse_Oversized
     (Self : in out Server; Length : Natural; Reply : Reply_Sink);
   --  The -32600 answer to a line longer than the configured cap

private

   type Reply_Shapes is array (Boolean, Energy_Gate.Pass_Count)
     of Json_Text.Template;
   --  The whole reply to a turn, by era (modern or not) and by how many
   --  passes ran, with holes for the turn's values: written the first time
   --  such a turn is answered

   type Port_Access is access Sampling_Port.Channel_Port;
   type Replay_Access is access Sampling_Port.Replay_Port;

   type Server is tagged limited record
      Limits        : Input_Guard.Limits := (64, 1_000_000);
      Max_Line      : Positive := 4 * 1024 * 1024;
      Chosen        : Organs.Sets.Organ_Set;
      Curve         : Energy_Gate.Threshold_Curve := [others => 0];
      Sessions      : Session_Table.Table;
      Store         : Session_Store.Store;
      --  Open: the sessions live there, and Sessions stays empty
      Initialized   : Boolean := False;
      --  A legacy `initialize` has been answered
      Answering     : Json_Reader.Node_Id := Json_Reader.No_Node;
      --  The id of the request being answered, once found to be one
      --  JSON-RPC allows: what an internal error's answer echoes
      Reader        : Json_Reader.Document;
      Answer        : Json_Text.Builder;
      --  Reused for every message: the parsed line and the reply
      Identity      : Turn_Tool.Result_Identity;
      Replies       : Reply_Shapes := [others => [others => Json_Text.No_Template]];
      --  The templates every turn's reply is filled into
      Origin_Replies : Reply_Shapes :=
        [others => [others => Json_Text.No_Template]];
      --  The same, for a call that gave key_origin (its session.origin)
      Cognition     : Body_Config.Cognition_Kind := Body_Config.Stub;
      Turn_Deadline : Positive := Body_Config.Default_Turn_Deadline_Ms;
      Client_Samples : Boolean := False;
      --  The legacy client declared capabilities.sampling in initialize
      Port          : Port_Access;
      Replay        : Replay_Access;
      --  Its 2026-07-28 form, input-required (the same)
      --  The model port of the turn in flight, made by Configure for
      --  --cognition sampling alone (a stub body never reads or parses for
      --  one)
      Silent        : Boolean := False;
      --  The request being handled gets no response (a cancelled turn)
   end record;

end Hermes_Protocol;
