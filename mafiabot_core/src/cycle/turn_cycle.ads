--  One turn through the 23-step cycle, for one session.  The walk follows
--  Cycle_Order step by step; each step asks its organ, through the set the
--  boot chose (Organs.Sets), and records what it did.  The session record
--  is the only state read or written (law L1), and the coherence result is
--  only reported (law L4).
--
--  A cognition that asks a model does so through the port the caller
--  gives Run (Organs.Model_Port): once per pass that runs and once for the
--  synthesis, each call's outcome recorded in the trace (Calls).  The port
--  is the caller's business, and so is its time; the cycle's own work stays
--  linear in the turn.
--
--  The trace is plain Ada: texts kept in one bounded store, fixed-point
--  numbers and enumerations.  Nothing here knows of JSON; the protocol
--  layer spells a trace (Turn_Tool).  Every text of a trace is cut to its
--  bound, visibly (Organs.Texts.Cut_Mark), whatever the organs said; the
--  store is sized as the sum of those bounds, so a turn that ran always
--  has a complete trace.

with Cycle_Order;
with Energy_Gate;
with Organs;
with Organs.Cognition;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Model_Port;
with Organs.Morag;
with Organs.Router;
with Organs.Sets;
with Organs.Texts;
with Session_Keys;
with Session_Table;

package Turn_Cycle is

   type Step_Status is (Ran, Skipped);

   --  The bound of every text a trace holds, from the organs' bounds and
   --  the few words the cycle writes around them (the "+ N" terms, each
   --  larger than those words), and the store's room as their sum.

   Key_Part_Bytes : constant := Session_Keys.Max_Part_Bytes;
   Name_Bytes     : constant := Organs.Max_Name_Bytes;
   Route_Bytes    : constant := Organs.Router.Max_Route_Bytes;
   Recall_Bytes   : constant := Organs.Morag.Max_Recall_Bytes;

   Budget_Bytes : constant := 96;
   --  "; budget: C of N calls left in S s, spent: no model call"

   Focus_Bytes : constant := 48;
   --  How much of the input a thought and the output quote: enough to
   --  recognise it (then "...")

   Scope_Bytes      : constant := 3 * Key_Part_Bytes + 32;
   --  "session uid/channel/server, turn N"
   Sense_Bytes      : constant := Recall_Bytes + 64 + Budget_Bytes;
   --  "energy E (terrain), P of 8 passes; budget: ...; recall: 'R'"
   Draw_Bytes       : constant := 2 * Name_Bytes + 32;
   --  "card, reversed, in position"
   Thought_Bytes    : constant := Organs.Cognition.Max_Thought_Bytes;
   Pack_Bytes       : constant := Organs.Mini_Rag.Max_Schema_Bytes + 16;
   --  "packed schema S"
   Intend_Bytes     : constant := Organs.Intender.Max_Basis_Bytes + 32;
   --  "intent I (basis)"
   Route_Step_Bytes : constant := Route_Bytes + 48;
   --  "I -> route (static Ada table)"
   Output_Bytes     : constant :=
     Route_Bytes + (Focus_Bytes + 3) + 8 * (Name_Bytes + 2) + Recall_Bytes
     + 48;
   --  "[route] On 'focus': move, ..., move (P/8 passes); recalled 'R'.",
   --  or what a turn whose model gave no thought says instead

   No_Thought_Bytes : constant :=
     Route_Bytes + 128 + Organs.Model_Port.Max_Error_Bytes;
   --  "[route] No thought: the model answered none of the N questions of
   --  this turn (the first: status: error)."

   pragma Compile_Time_Error
     (Output_Bytes < No_Thought_Bytes,
      "a turn's output must have room to say that the model gave none");
   Synthesis_Bytes  : constant := Route_Bytes + 64;
   --  "output of N bytes from P passes and route R"
   Cohere_Bytes     : constant := 64;
   --  "score S, drift D (reported, never fed back)"

   Sampled_Output_Bytes : constant := Organs.Cognition.Max_Synthesis_Bytes;
   --  An output a cognition synthesized itself (empty for the stub's)

   Text_Capacity : constant :=
     3 * Key_Part_Bytes + Route_Bytes + Recall_Bytes + Output_Bytes
     + Sampled_Output_Bytes
     + Scope_Bytes + Sense_Bytes + 8 * (Draw_Bytes + Thought_Bytes)
     + Organs.Intender.Max_Basis_Bytes + Organs.Intender.Max_Said_Bytes
     + Pack_Bytes + Intend_Bytes
     + Route_Step_Bytes + Synthesis_Bytes + Cohere_Bytes;
   --  Every part a turn keeps: the key parts, the route, the recall, the
   --  output, the intent's basis and what the model said of the intent,
   --  and the details of the 23 steps

   pragma Compile_Time_Error
     (Thought_Bytes < Draw_Bytes + Name_Bytes + Focus_Bytes + 16,
      "a stub thought (move 'focus' through draw) must fit its bound");

   subtype Span is Organs.Texts.Part;
   --  A text of a trace's Texts; empty by default

   type Step_Trace is record
      Status : Step_Status := Skipped;
      Detail : Span;
      --  What the organ did; empty when the step was skipped
   end record;

   type Step_Traces is array (Cycle_Order.Step_Index) of Step_Trace;

   Max_Calls : constant := Cycle_Order.Max_Model_Calls;
   --  A cognition is asked once per pass and once for the synthesis, an
   --  intender that asks the model once for the intent

   type Call_Trace is record
      Step : Cycle_Order.Step_Index := 1;
      --  The reasoning step (or the intent, or the synthesis) the call was
      --  made for
      Call : Organs.Model_Port.Call_Record;
   end record;

   subtype Call_Count is Natural range 0 .. Max_Calls;

   type Call_Traces is array (1 .. Max_Calls) of Call_Trace;

   type Turn_Trace is limited record
      Uid       : Span;
      Channel   : Span;
      Server    : Span;
      --  The session's key parts
      Turn      : Positive := 1;
      Energy    : Organs.Fraction := 0.0;
      Terrain   : Organs.Drive_Box.Terrain_Kind := Organs.Drive_Box.Depleted;
      Passes    : Energy_Gate.Pass_Count := 1;
      Recall_Hits : Organs.Morag.Hit_List := Organs.Morag.No_Hits;
      Recall_Hit_Last : Organs.Morag.Hit_Count := 0;
      --  Recall_Hits (1 .. Recall_Hit_Last): the earlier turns the recall
      --  drew on and their scores, best first (none from an organ that
      --  does not rank)
      --  Budget (--energy budget): the session's budget as the turn
      --  found it, and what the turn spent of it
      Budget    : Organs.Drive_Box.Budget_View;
      Calls_Left : Natural := Organs.Drive_Box.Unmetered;
      Used      : Organs.Drive_Box.Turn_Use;
      Steps     : Step_Traces;
      Intent    : Organs.Intent_Kind := Organs.Chat;
      --  The intent's statement (step 20), when the intender asks the
      --  model (--intent model): who stated it, why the rules did where
      --  the model was asked, and what the model answered (empty for none)
      Intent_Asked    : Boolean := False;
      Intent_Source   : Organs.Intender.Intent_Source :=
        Organs.Intender.Rules;
      Intent_Fallback : Organs.Intender.Model_Fallback :=
        Organs.Intender.No_Fallback;
      Intent_Said     : Span;
      Route     : Span;
      Coherence : Organs.Fraction := 0.0;
      Drift     : Organs.Fraction := 0.0;
      Output    : Span;
      Reach     : Organs.Model_Port.Reach := Organs.Model_Port.No_Capability;
      --  Whether the turn's cognition could reach a model at all
      Calls     : Call_Traces;
      Call_Last : Call_Count := 0;
      --  Calls (1 .. Call_Last): what the cognition said of each pass that
      --  ran and of the synthesis, and the intender of the intent when it
      --  asks the model, in step order
      Texts     : Organs.Texts.Store (Text_Capacity);
      --  Every text of the turn, back to back: a turn allocates nothing
      --  for its trace
   end record;

   function Runs
     (Step : Cycle_Order.Step_Index; Passes : Energy_Gate.Pass_Count)
      return Boolean renames Cycle_Order.Runs;

   function Is_Consistent (Trace : Turn_Trace) return Boolean is
     (for all Step in Cycle_Order.Step_Index =>
        (Trace.Steps (Step).Status = Ran) = Runs (Step, Trace.Passes));
   --  The steps that ran are exactly those a turn of Trace.Passes runs

   function Is_Complete (Trace : Turn_Trace) return Boolean is
     (Is_Consistent (Trace)
      and then not Organs.Texts.Is_Writing (Trace.Texts)
      and then (for all Step of Trace.Steps =>
                  Organs.Texts.Is_Kept (Trace.Texts, Step.Detail))
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Uid)
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Channel)
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Server)
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Route)
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Intent_Said)
      and then Organs.Texts.Is_Kept (Trace.Texts, Trace.Output));
   --  Every step recorded, and every text of the trace kept in its Texts

   function Text_Of (Trace : Turn_Trace; Part : Span) return String is
     (Organs.Texts.Text_Of (Trace.Texts, Part))
   with Pre => Organs.Texts.Is_Kept (Trace.Texts, Part);

   function Is_Thought (Call : Call_Trace) return Boolean is
     (Call.Call.Asked
      and then Cycle_Order."/=" (Cycle_Order.Phase (Call.Step),
                                 Cycle_Order.Intend));
   --  A question the cognition asked (of a pass or of the synthesis), not
   --  the intender's

   function Got_No_Thought (Trace : Turn_Trace) return Boolean is
     ((for some Index in 1 .. Trace.Call_Last =>
         Is_Thought (Trace.Calls (Index)))
      and then
        (for all Index in 1 .. Trace.Call_Last =>
           not Is_Thought (Trace.Calls (Index))
           or else Organs.Model_Port."/="
                     (Trace.Calls (Index).Call.Facts.Status,
                      Organs.Model_Port.Answered)));
   --  Whether the turn's cognition asked its model and got no answer to
   --  any question: the turn's output then says that the model gave no
   --  thought, and does not stand in for one (an intent it named is no
   --  thought)

   procedure Run
     (Chosen               : Organs.Sets.Organ_Set;
      Curve                : Energy_Gate.Threshold_Curve;
      Session              : in out Session_Table.Session;
      Memory               : in out Organs.Morag.Memory'Class;
      Uid, Channel, Server : String;
      Input                : String;
      Port                 : in out Organs.Model_Port.Port'Class;
      Trace                : out Turn_Trace;
      Remembering          : Boolean := True)
   with
     Pre  => Organs.Sets.Is_Complete (Chosen)
             and then Energy_Gate.Is_Valid (Curve),
     Post => Trace.Turn = Session.Turns and then Is_Complete (Trace)
             and then Trace.Intent_Asked = Chosen.Intender.Asks_Model
             and then Trace.Call_Last
                      = Energy_Gate.Planned_Calls
                          (Trace.Passes, Trace.Intent_Asked);
   --  Every step outside the passes runs; a pass runs iff it is within the
   --  prefix the energy gate allowed (law L3).  Session is the record of
   --  the session whose key is Uid, Channel and Server, and Memory its
   --  MoRAG memory, which the turn's input is remembered in at the end
   --  (Remember) unless not Remembering: a tentative round, whose caller
   --  remembers it only once the round is kept.  Key parts longer
   --  than Key_Part_Bytes are cut, visibly (the protocol refuses them).
   --  The cognition asks its model, if it has one, through Port: once per
   --  pass that runs and once for the synthesis, and the intender once for
   --  the intent if it asks the model, never more (Energy_Gate.Planned_Calls
   --  counts them).

   procedure Run
     (Chosen               : Organs.Sets.Organ_Set;
      Curve                : Energy_Gate.Threshold_Curve;
      Session              : in out Session_Table.Session;
      Memory               : in out Organs.Morag.Memory'Class;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Trace)
   with
     Pre  => Organs.Sets.Is_Complete (Chosen)
             and then Energy_Gate.Is_Valid (Curve),
     Post => Trace.Turn = Session.Turns and then Is_Complete (Trace);
   --  The same, with no model to reach (Organs.Model_Port.Unreachable)

   procedure Remember
     (Chosen : Organs.Sets.Organ_Set;
      Memory : in out Organs.Morag.Memory'Class;
      Turn   : Positive;
      Input  : String)
   with Pre => Organs.Sets.Is_Complete (Chosen);
   --  The chosen MoRAG keeps what the session's turn Turn of Input leaves,
   --  unless Memory already holds a turn as late (a session at the last
   --  turn number, whose memory then stays as it is)

end Turn_Cycle;
