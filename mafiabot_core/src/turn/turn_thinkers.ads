--  Who thinks a turn: the body's cognition reaches a model, if it has one,
--  through the model port the thinker gives each turn.  The thinker is
--  chosen once at boot (the stub's, Stub_Thinker, that asks nothing; the
--  client's model over MCP sampling, Sampling_Port.Thinker) and injected
--  into the turn service, which asks it for every turn's port and plan:
--  no unit above it tests which cognition the body runs.
--
--  Contract any thinker honours: Start_Turn decides from the call alone
--  (what the client can be asked, and how) and touches no session; a turn
--  whose every answer the client must give in rounds of its own
--  (Tentative) is run on a copy of its session, which becomes the session
--  only once the round needed no more input; Ending says, after the cycle
--  ran on Plan.Port, how the turn ended.

with Ada.Strings.Unbounded;
with Organs.Model_Port;
with Session_Repositories;

package Turn_Thinkers is

   type Client_Reach is
     (None,
      --  The client declared no way to be asked for its model
      Live,
      --  By a request of the body's own while the call waits (a legacy
      --  client that declared capabilities.sampling)
      Rounds);
      --  By rounds of the client's own, each call answered input-required
      --  (a 2026-07-28 request that declared the sampling capability)
   --  What the protocol read of the call: a fact of the wire, not of the
   --  body's cognition

   type Port_Access is access all Organs.Model_Port.Port'Class;

   type Turn_Plan is record
      Valid     : Boolean := True;
      Problem   : Ada.Strings.Unbounded.Unbounded_String;
      --  When not Valid: why the call cannot be thought (a state the body
      --  did not give), on one line; nothing of the turn happens
      Port      : Port_Access;
      Length    : Session_Repositories.Turn_Length :=
        Session_Repositories.Short;
      Tentative : Boolean := False;
   end record;

   type Round_End is
     (Thought,
      --  The turn ran: its trace is the answer
      Asked_Client,
      --  The round asked what the client has not answered yet
      Call_Cancelled);
      --  The client cancelled the call while it waited: no answer
   --  How the thinker's last round ended (Turn_Service.Turn_End is the
   --  turn's, the store's outcome included)

   type Thinker is limited interface;

   procedure Start_Turn
     (Self        : in out Thinker;
      Reach       : Client_Reach;
      Call_Id     : String;
      State       : String;
      Responses   : String;
      Session_Key : String;
      Input       : String;
      Plan        : out Turn_Plan) is abstract
   with Post'Class => not Plan.Valid or else Plan.Port /= null;
   --  The port and plan of the turn of Session_Key and Input that the call
   --  Call_Id (its request id as sent) asks, whose client Reach says how
   --  to ask.  Rounds: State is the requestState the client echoed ("" on
   --  a first round), Responses its inputResponses (raw JSON, "" for none).

   function Ending (Self : Thinker) return Round_End is abstract;
   --  How the turn last started ended

   function Pending_Requests (Self : Thinker) return String is abstract;
   function Pending_State (Self : Thinker) return String is abstract;
   --  When Ending is Asked_Client: what the client is asked (the raw JSON
   --  of its requests) and the state it echoes with its answers

   type Thinker_Access is access all Thinker'Class;

   type Stub_Thinker is limited new Thinker with private;
   --  The stub cognition's: it asks no model, so every turn is short

   overriding procedure Start_Turn
     (Self        : in out Stub_Thinker;
      Reach       : Client_Reach;
      Call_Id     : String;
      State       : String;
      Responses   : String;
      Session_Key : String;
      Input       : String;
      Plan        : out Turn_Plan);

   overriding function Ending (Self : Stub_Thinker) return Round_End is
     (Thought);

   overriding function Pending_Requests (Self : Stub_Thinker) return String
   is ("");
   overriding function Pending_State (Self : Stub_Thinker) return String
   is ("");

private

   type Stub_Thinker is limited new Thinker with record
      Nowhere : aliased Organs.Model_Port.Unreachable
                          (Organs.Model_Port.No_Capability);
   end record;

end Turn_Thinkers;
