--  One turn through the 23-step cycle, for one session.  The walk follows
--  Cycle_Order step by step; each step asks its organ and records what it
--  did.  The session record is the only state read or written (law L1), and
--  the coherence result is only reported (law L4).

with Cycle_Order;
with Energy_Gate;
with Json_Text;
with Organs;
with Session_Table;

package Turn_Cycle is

   type Step_Status is (Ran, Skipped);

   Text_Capacity : constant := 16 * 1024;
   --  Room for every text a turn produces.  What goes in is bounded by
   --  construction: key parts of 256 bytes, a quoted input of 51, a recall
   --  of at most 1,024 (kept, then quoted twice), fixture names of at most
   --  Organs.Max_Name_Bytes (8 cards, 8 positions and 8 moves, the draws
   --  quoted again in the thoughts and the moves in the output): about 12
   --  kB at the very worst.  The bound matters: the turn's numbers are kept
   --  here too, and a store that ran out of room would cut them (Run's
   --  postcondition says none was cut).

   subtype Span is Json_Text.Stored_Text;
   --  A piece of a trace's Texts; empty by default

   type Step_Trace is record
      Status : Step_Status := Skipped;
      Detail : Span;
      --  What the organ did; empty when the step was skipped
   end record;

   type Step_Traces is array (Cycle_Order.Step_Index) of Step_Trace;

   type Turn_Trace is record
      Uid       : Span;
      Channel   : Span;
      Server    : Span;
      --  The session's key parts
      Turn      : Positive := 1;
      Energy    : Energy_Gate.Millis := 0;
      Passes    : Energy_Gate.Pass_Count := 1;
      Steps     : Step_Traces;
      Intent    : Organs.Intent_Kind := Organs.Chat;
      Intent_Name : Span;
      --  Intent as the trace spells it
      Route     : Span;
      Coherence : Organs.Millis := 0;
      Drift     : Organs.Millis := 0;
      Turn_Text, Energy_Text, Coherence_Text, Drift_Text : Span;
      --  Turn, Energy, Coherence and Drift as the trace spells them
      Output    : Span;
      Texts     : Json_Text.Text_Store (Text_Capacity);
      --  Every text of the turn, back to back: a turn allocates nothing
      --  for its trace, and the trace, written twice as JSON, is tested
      --  for escapes once, in one pass, when the turn is over (sealed)
   end record;

   function Runs
     (Step : Cycle_Order.Step_Index; Passes : Energy_Gate.Pass_Count)
      return Boolean is
     (Cycle_Order.Phase (Step) not in Cycle_Order.Pass_Phase
      or else Natural (Cycle_Order.Pass_Of (Step)) <= Passes);
   --  Whether Step runs in a turn of Passes passes: every step outside the
   --  passes, and the passes within the prefix the energy gate allowed

   function Is_Consistent (Trace : Turn_Trace) return Boolean is
     (for all Step in Cycle_Order.Step_Index =>
        (Trace.Steps (Step).Status = Ran) = Runs (Step, Trace.Passes));
   --  The steps that ran are exactly those a turn of Trace.Passes runs

   function Text_Of (Trace : Turn_Trace; Part : Span) return String is
     (Json_Text.Text_Of (Trace.Texts, Part))
   with Pre => Json_Text.Is_Kept (Trace.Texts, Part);

   procedure Run
     (Stub                 : Organs.Fixture;
      Session              : in out Session_Table.Session;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Trace)
   with
     Post =>
       Trace.Turn = Session.Turns
       and then Json_Text.Is_Sealed (Trace.Texts)
       and then Json_Text.Is_Whole (Trace.Texts)
       and then Is_Consistent (Trace);
   --  Every step outside the passes runs; a pass runs iff it is within the
   --  prefix the energy gate allowed (law L3).  Session is the record of
   --  the session whose key is Uid, Channel and Server.

end Turn_Cycle;
