--  The model port over MCP: each Ask is one server-initiated
--  `sampling/createMessage` request sent through the client channel, in the
--  body's own id space (whole numbers from 1, never reused while the body
--  runs), answered by the client while its `tools/call` waits.
--
--  While a request waits, the port reads nothing itself: the protocol
--  (a Line_Server) reads the client's next lines and serves each as it
--  serves any line, handing back what is the port's business:
--  - the response whose id is the pending request's ends the wait;
--  - `notifications/cancelled` naming the turn's request cancels the turn:
--    the pending request is cancelled towards the client in turn, nothing
--    more is asked, and the turn gets no response (Turn_Thinkers.Call_Cancelled);
--  - a line that is not JSON, or past --max-line-bytes (answered as
--    always), fails the pending request: it may have been its answer.
--  A request unanswered by its deadline is cancelled towards the client
--  (notifications/cancelled) and Timed_Out; an error response is Failed,
--  with the client's code and message; so is a result with no text.
--
--  Thinker is the sampling cognition's thinker (Turn_Thinkers): it gives
--  each turn this port, or the input-required one (Replay_Port) for a
--  2026-07-28 call, chosen by what the call says the client can do.

with Client_Channels;
with Input_Guard;
with Json_Reader;
with Json_Text;
with Monotonic;
with Organs.Model_Port;
with Organs.Texts;
with Turn_Thinkers;
with Wall_Clocks;

private with Ada.Strings.Unbounded;
private with Cycle_Order;

package Sampling_Port is

   type Wait_Event is
     (Served,
      --  A line was served as any line is: the wait goes on
      Answered,
      --  The response to the pending request was given to the port
      Turn_Cancelled,
      --  The client cancelled the turn's own request
      Not_Json,
      --  A line that is not JSON came (and was answered -32700)
      Oversized,
      --  A line past --max-line-bytes came (and was refused)
      Timed_Out,
      --  Nothing by the deadline
      Input_Closed);
      --  The client's input ended

   type Line_Server is limited interface;
   --  Who reads and serves the client's lines while a request of the
   --  body's waits: the protocol, by the rules it serves every line by

   procedure Serve_While_Waiting
     (Self       : in out Line_Server;
      Pending_Id : String;
      Turn_Id    : String;
      Deadline   : Monotonic.Instant;
      Take       : not null access procedure
                     (Reader        : Json_Reader.Document;
                      Line          : String;
                      Result, Error : Json_Reader.Node_Id);
      Event      : out Wait_Event) is abstract;
   --  Read the client's next line by Deadline and serve it, but the
   --  response whose id is Pending_Id (as sent), given to Take (Answered),
   --  and a cancel of the request Turn_Id (Turn_Cancelled)

   type Line_Server_Access is access all Line_Server'Class;

   type Channel_Port is limited new Organs.Model_Port.Port with private;

   procedure Open
     (Self          : in out Channel_Port;
      Reach         : Organs.Model_Port.Reach;
      Turn_Id       : String;
      Turn_Deadline : Monotonic.Instant);
   --  The port of the tools/call whose id is Turn_Id (as sent), for a turn
   --  that ends by Turn_Deadline at the latest

   function Was_Cancelled (Self : Channel_Port) return Boolean;
   --  The client cancelled the turn: its request gets no response

   overriding function Reach_Of (Self : Channel_Port)
     return Organs.Model_Port.Reach;

   overriding procedure Ask
     (Self          : in out Channel_Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Organs.Model_Port.Answer_Facts);

   --  The 2026-07-28 form (input-required, SEP-2322): a stateless request
   --  cannot be answered by a request of the body's own, so a sampled turn
   --  runs once per round of the client's: every call answered so far is
   --  replayed from the state the body gave the client to echo, and the
   --  first unanswered call ends the round as an `InputRequiredResult`
   --  asking it (inputRequests {"call-N": sampling/createMessage}, and
   --  requestState: the answers so far, bound to the call's session key and
   --  input by a MAC under the body's secret, so that no client can write
   --  one the body accepts).  The round whose every call is answered is the
   --  turn; the others leave the session as it was (the caller runs them
   --  on a copy).

   Min_Secret_Bytes : constant := 32;

   type Replay_Port is limited new Organs.Model_Port.Port with private;

   procedure Resume
     (Self      : in out Replay_Port;
      Call_Key  : String;
      State     : String;
      Responses : String;
      Limits    : Input_Guard.Limits;
      Valid     : out Boolean);
   --  The answers of the rounds before, from State (requestState as the
   --  client echoed it; "" on the first round) and Responses (the raw JSON
   --  of inputResponses; "" for none), for the call whose session key and
   --  input make Call_Key.  Valid is False for a state the body did not
   --  write for this call.

   procedure Set_Secret (Self : in out Replay_Port; Secret : String)
   with Pre => Secret'Length >= Min_Secret_Bytes;
   --  The key requestState is authenticated with (HMAC-SHA-256): drawn at
   --  start-up, or kept in the store so that every body on it shares it

   function Refusal (Self : Replay_Port) return String;
   --  Why the last Resume was not Valid, on one line ("" when it was)

   function Needs_Input (Self : Replay_Port) return Boolean;
   --  The round asked a call not answered yet: it ends input-required

   function Input_Requests (Self : Replay_Port) return String
   with Pre => Needs_Input (Self);
   --  The round's inputRequests (raw JSON): the call not answered yet

   function Request_State (Self : Replay_Port) return String
   with Pre => Needs_Input (Self);
   --  The round's requestState: the answers so far, bound to the call

   overriding function Reach_Of (Self : Replay_Port)
     return Organs.Model_Port.Reach is (Organs.Model_Port.Reachable);

   overriding procedure Ask
     (Self          : in out Replay_Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Organs.Model_Port.Answer_Facts);

   type Thinker is limited new Turn_Thinkers.Thinker with private;

   procedure Connect
     (Self             : in out Thinker;
      Client           : not null Client_Channels.Channel_Access;
      Lines            : not null Line_Server_Access;
      Limits           : Input_Guard.Limits;
      Turn_Deadline_Ms : Positive);
   --  At boot: the channel the port's requests go out by, who serves the
   --  lines that come while one waits, the input guard's limits a state
   --  is read with, and how long a turn may wait on the client in all

   overriding procedure Start_Turn
     (Self        : in out Thinker;
      Reach       : Turn_Thinkers.Client_Reach;
      Call_Id     : String;
      State       : String;
      Responses   : String;
      Session_Key : String;
      Input       : String;
      Plan        : out Turn_Thinkers.Turn_Plan);
   --  Live: the channel port, a long turn; Rounds: the input-required
   --  port, a tentative short turn (refused when State is not one the body
   --  gave for this call); None: the channel port that cannot reach the
   --  client (the fallback thinks), a short turn

   procedure Set_Secret (Self : in out Thinker; Secret : String)
   with Pre => Secret'Length >= Min_Secret_Bytes;
   --  The key every requestState this thinker gives is bound with

   procedure Pin_Rounds_On
     (Self : in out Thinker; Clock : not null access Wall_Clocks.Turn_Clock);
   --  Budget (--energy budget): every round of a turn in rounds senses its
   --  energy at the time of the turn's first round, which its requestState
   --  carries (bound by the MAC with the answers); a turn asked live, or a
   --  first round, senses at Now

   overriding function Ending (Self : Thinker) return Turn_Thinkers.Round_End;

   type Thinker_Access is access all Thinker;

   overriding function Pending_Requests (Self : Thinker) return String;
   overriding function Pending_State (Self : Thinker) return String;

private

   Max_Replayed_Calls : constant := Cycle_Order.Max_Model_Calls;

   type Replayed is record
      Status : Organs.Model_Port.Ask_Status := Organs.Model_Port.Failed;
      Model  : Ada.Strings.Unbounded.Unbounded_String;
      Text   : Ada.Strings.Unbounded.Unbounded_String;
      --  The answer, or why there was none
   end record;

   Key_Id_Length : constant := 16;

   type Refusal_Kind is (Not_Refused, Not_Given, Other_Key);

   type Replayed_Calls is array (1 .. Max_Replayed_Calls) of Replayed;

   type Replay_Port is limited new Organs.Model_Port.Port with record
      Call_Key      : Ada.Strings.Unbounded.Unbounded_String;
      Secret        : Ada.Strings.Unbounded.Unbounded_String;
      Key_Id        : String (1 .. Key_Id_Length) := [others => '0'];
      --  Names the secret in every state, so that one given under another
      --  (before a restart) is told apart from one never given
      Refused       : Refusal_Kind := Not_Refused;
      Answers       : Replayed_Calls;
      Answered      : Natural range 0 .. Max_Replayed_Calls := 0;
      Asked         : Natural := 0;
      Waiting       : Boolean := False;
      System_Prompt : Ada.Strings.Unbounded.Unbounded_String;
      Prompt        : Ada.Strings.Unbounded.Unbounded_String;
      Max_Tokens    : Positive := 1;
      --  The question of the first call not answered yet
      Reader        : Json_Reader.Document;
      First_Round   : Wall_Clocks.Epoch_Ms := 0;
      --  Budget: when the turn's first round sensed (0: not known)
      Clock         : access constant Wall_Clocks.Clock'Class;
      --  Where the first round's time is read (null: no budget to pin)
   end record;

   function Needs_Input (Self : Replay_Port) return Boolean is (Self.Waiting);

   type Channel_Port is limited new Organs.Model_Port.Port with record
      Reach         : Organs.Model_Port.Reach :=
        Organs.Model_Port.No_Capability;
      Turn_Id       : Ada.Strings.Unbounded.Unbounded_String;
      --  The turn's id as sent
      Turn_Deadline : Monotonic.Instant := Monotonic.Instant'First;
      Cancelled     : Boolean := False;
      Closed        : Boolean := False;
      --  The client's input ended: nothing will answer
      Client        : Client_Channels.Channel_Access;
      Lines         : Line_Server_Access;
      Message       : Json_Text.Builder;
   end record;

   function Was_Cancelled (Self : Channel_Port) return Boolean is
     (Self.Cancelled);

   overriding function Reach_Of (Self : Channel_Port)
     return Organs.Model_Port.Reach is (Self.Reach);

   type Thinker is limited new Turn_Thinkers.Thinker with record
      Live          : aliased Channel_Port;
      Replay        : aliased Replay_Port;
      Last          : Turn_Thinkers.Client_Reach := Turn_Thinkers.None;
      --  How the turn last started reaches its client
      Limits        : Input_Guard.Limits := (64, 1_000_000);
      Turn_Deadline : Positive := 1;
      Rounds_Clock  : access Wall_Clocks.Turn_Clock;
      --  Budget: the clock a turn in rounds is pinned on (null: none)
   end record;

end Sampling_Port;
