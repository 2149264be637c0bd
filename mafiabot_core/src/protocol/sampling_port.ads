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

with Monotonic;
with Input_Guard;
with Organs.Model_Port;
with Organs.Texts;

private with Ada.Strings.Unbounded;
private with Json_Reader;
private with Json_Text;

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

private

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
