--  The model port over MCP: each Ask is one server-initiated
--  `sampling/createMessage` request on stdout, in the body's own id space
--  (whole numbers from 1, never reused while the body runs), answered by
--  the client on stdin while its `tools/call` waits.
--
--  While a request waits, every line the client sends is read here (with
--  the input guard's limits, as every line is):
--  - the response whose id is the pending request's ends the wait;
--  - a valid `ping` without `_meta` is answered at once (the spec asks it
--    be answered promptly; any other is answered as always, after the turn);
--  - `notifications/cancelled` naming the turn's request cancels the turn:
--    the pending request is cancelled towards the client in turn, nothing
--    more is asked, and the turn gets no response (Was_Cancelled);
--  - a response with another id (a late answer to a request given up) is
--    logged and dropped;
--  - any other message is set aside (Stdio_Channel.Defer) and handled as
--    usual once the turn is answered; a request the bounded queue has no
--    room for is answered -32000 at once;
--  - a line that is not JSON is set aside too (it is answered -32700 as
--    always) and fails the pending request: it may have been its answer.
--  A line past --max-line-bytes is refused as always and fails it too.
--  A request unanswered by its deadline is cancelled towards the client
--  (notifications/cancelled) and Timed_Out; an error response is Failed,
--  with the client's code and message; so is a result with no text.

with Input_Guard;
with Json_Text;
with Monotonic;
with Organs.Model_Port;
with Organs.Texts;

private with Ada.Strings.Unbounded;
private with Energy_Gate;
private with Json_Reader;

package Sampling_Port is

   type Channel_Port is limited new Organs.Model_Port.Port with private;

   procedure Open
     (Self          : in out Channel_Port;
      Reach         : Organs.Model_Port.Reach;
      Turn_Id       : String;
      Turn_Deadline : Monotonic.Instant;
      Limits        : Input_Guard.Limits);
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

   Busy_Code : constant := -32_000;
   --  A request the queue of set-aside messages has no room for

   --  The 2026-07-28 form (input-required, SEP-2322): a stateless request
   --  cannot be answered by a request of the body's own, so a sampled turn
   --  runs once per round of the client's: every call answered so far is
   --  replayed from the state the body gave the client to echo, and the
   --  first unanswered call ends the round as an `InputRequiredResult`
   --  asking it (inputRequests {"call-N": sampling/createMessage}, and
   --  requestState: the answers so far, bound to the call's session key and
   --  input).  The round whose every call is answered is the turn; the
   --  others leave the session as it was (the caller runs them on a copy).

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

   function Needs_Input (Self : Replay_Port) return Boolean;
   --  The round asked a call not answered yet: it ends input-required

   procedure Write_Input_Required
     (Self : Replay_Port; Json : in out Json_Text.Builder)
   with Pre => Needs_Input (Self);
   --  The members inputRequests and requestState of the round's result

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

private

   Max_Replayed_Calls : constant := Energy_Gate.Pass_Total + 1;

   type Replayed is record
      Status : Organs.Model_Port.Ask_Status := Organs.Model_Port.Failed;
      Model  : Ada.Strings.Unbounded.Unbounded_String;
      Text   : Ada.Strings.Unbounded.Unbounded_String;
      --  The answer, or why there was none
   end record;

   type Replayed_Calls is array (1 .. Max_Replayed_Calls) of Replayed;

   type Replay_Port is limited new Organs.Model_Port.Port with record
      Call_Hash     : Ada.Strings.Unbounded.Unbounded_String;
      Answers       : Replayed_Calls;
      Answered      : Natural range 0 .. Max_Replayed_Calls := 0;
      Asked         : Natural := 0;
      Waiting       : Boolean := False;
      System_Prompt : Ada.Strings.Unbounded.Unbounded_String;
      Prompt        : Ada.Strings.Unbounded.Unbounded_String;
      Max_Tokens    : Positive := 1;
      --  The question of the first call not answered yet
      Reader        : Json_Reader.Document;
   end record;

   function Needs_Input (Self : Replay_Port) return Boolean is (Self.Waiting);

   type Channel_Port is limited new Organs.Model_Port.Port with record
      Reach         : Organs.Model_Port.Reach :=
        Organs.Model_Port.No_Capability;
      Turn_Id       : Ada.Strings.Unbounded.Unbounded_String;
      --  The turn's id as sent
      Turn_Deadline : Monotonic.Instant := Monotonic.Instant'First;
      Limits        : Input_Guard.Limits := (64, 1_000_000);
      Cancelled     : Boolean := False;
      Closed        : Boolean := False;
      --  stdin ended: nothing will answer
      Reader        : Json_Reader.Document;
      Message       : Json_Text.Builder;
   end record;

   function Was_Cancelled (Self : Channel_Port) return Boolean is
     (Self.Cancelled);

   overriding function Reach_Of (Self : Channel_Port)
     return Organs.Model_Port.Reach is (Self.Reach);

end Sampling_Port;
