--  The port a model-backed organ asks its model through: one question, one
--  answer, within a deadline.  Declared here, on the organs' side, so that
--  an organ never names the protocol or the channel that carries the
--  question (the layers hold: organs/ never `with` protocol/ or io/); the
--  protocol layer implements it over the client request in flight
--  (Sampling_Port: MCP sampling/createMessage), a test with a script.
--
--  Contract any port honours:
--  - Ask returns by Deadline (or by the turn's own deadline, if the port
--    holds an earlier one), whatever the far side does: never a hang;
--  - it raises nothing for anything the far side sends: a refusal, a
--    malformed or oversized answer, a timeout, a cancelled turn are
--    statuses with a one-line Error;
--  - the answer's text goes into the part being written into Answer, cut
--    at that part's bound, visibly, however long it was;
--  - it carries what the organ gives it and nothing else: an organ puts
--    into a prompt only what it may see (L1, L4).
--
--  A port is one turn's: it is made for the request in flight and ends
--  with it.  Once a turn is cancelled, or its deadline has passed, or the
--  far side is gone, every later Ask returns at once without asking.

with Monotonic;
with Organs.Texts;

package Organs.Model_Port is

   type Reach is
     (Reachable,
      --  The client declared it can be asked (capabilities.sampling)
      No_Capability,
      --  The client did not declare the capability
      Budget_Spent);
      --  The session's budget has no call left for the cheapest turn
      --  (--energy budget): the turn asks nothing
   --  Whether the port can ask at all, fixed when the port is made

   type Ask_Status is (Answered, Failed, Timed_Out, Cancelled);
   --  Answered: the text went into Answer; Failed: the far side refused,
   --  or answered something that is no answer (Error says what);
   --  Timed_Out: no answer by the deadline; Cancelled: the turn was
   --  cancelled, nothing more is asked

   function Status_Name (Status : Ask_Status) return String is
     (case Status is
         when Answered => "answered",
         when Failed => "failed",
         when Timed_Out => "timed_out",
         when Cancelled => "cancelled");
   --  How a status is spelled wherever the body names it

   Max_Model_Bytes : constant := 128;
   --  The model's name as the far side reported it, cut to this
   Max_Error_Bytes : constant := 160;
   --  One line saying why a question got no answer, cut to this

   subtype Model_Length is Natural range 0 .. Max_Model_Bytes;
   subtype Error_Length is Natural range 0 .. Max_Error_Bytes;

   type Answer_Facts is record
      Status      : Ask_Status := Failed;
      Model       : String (1 .. Max_Model_Bytes);
      Model_Last  : Model_Length := 0;
      --  Model (1 .. Model_Last): empty when none was reported
      Has_Tokens  : Boolean := False;
      Tokens      : Natural := 0;
      --  What the answer cost, when the far side said so
      Latency_Us  : Natural := 0;
      --  From the question sent to its answer read (0 when never sent)
      Error       : String (1 .. Max_Error_Bytes);
      Error_Last  : Error_Length := 0;
      --  Error (1 .. Error_Last): empty when Answered
   end record;
   --  What one Ask came to, beside the text.  Only the first Model_Last
   --  and Error_Last bytes of the two texts are ever read, so the rest is
   --  left as it is: every pass of every turn makes one of these

   type Call_Record is record
      Asked : Boolean := False;
      --  A model was asked (whatever came of it); False: the organ answered
      --  without one
      Facts : Answer_Facts;
      --  What came of it, when Asked
   end record;
   --  What an organ that may ask a model says of one of its calls: the
   --  cognition of a pass or of the synthesis, the intender of its intent

   procedure Clear (Facts : out Answer_Facts)
   with Post => Facts.Status = Failed and then Facts.Model_Last = 0
                and then Facts.Error_Last = 0 and then not Facts.Has_Tokens
                and then Facts.Latency_Us = 0;
   --  Nothing came of it yet (the texts' bytes are left as they are)

   function Model_Of (Facts : Answer_Facts) return String is
     (Facts.Model (1 .. Facts.Model_Last));

   function Error_Of (Facts : Answer_Facts) return String is
     (Facts.Error (1 .. Facts.Error_Last));

   procedure Set_Error (Facts : in out Answer_Facts; Error : String);
   --  Error, cut to Max_Error_Bytes on a character boundary

   procedure Set_Model (Facts : in out Answer_Facts; Model : String);
   --  Model, cut to Max_Model_Bytes on a character boundary

   Max_Quoted_Input_Bytes : constant := 2048;
   --  How much of the turn a prompt quotes

   function Quoted_Input (Input : String) return String
   with Post => Quoted_Input'Result'Length
                <= Max_Quoted_Input_Bytes + Organs.Texts.Cut_Mark'Length;
   --  The turn as every prompt quotes it: Input, cut to
   --  Max_Quoted_Input_Bytes on a character boundary, visibly

   type Port is limited interface;

   function Reach_Of (Self : Port) return Reach is abstract;

   procedure Ask
     (Self          : in out Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Answer_Facts) is abstract
   with Pre'Class  => Organs.Texts.Is_Writing (Answer),
        Post'Class => Organs.Texts.Is_Writing (Answer)
                      and then (Facts.Status = Answered
                                or else Facts.Error_Last > 0);
   --  Ask Prompt (UTF-8) of the model, for at most Max_Tokens tokens, and
   --  add its answer to the part being written into Answer.  Only when
   --  Reach_Of (Self) = Reachable does a question leave; otherwise Failed.

   type Unreachable (Why : Reach) is limited new Port with null record;
   --  A port that never asks: what a turn that cannot reach a model runs
   --  with (the stub cognition never asks at all)

   overriding function Reach_Of (Self : Unreachable) return Reach is
     (Self.Why);

   overriding procedure Ask
     (Self          : in out Unreachable;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Answer_Facts);
   --  Failed, "no model to ask"

end Organs.Model_Port;
