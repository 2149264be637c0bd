--  One turn through the 23-step cycle, for one session.  The walk follows
--  Cycle_Order step by step; each step asks its organ and records what it
--  did.  The session record is the only state read or written (law L1), and
--  the coherence result is only reported (law L4).

with Ada.Strings.Unbounded;
with Cycle_Order;
with Energy_Gate;
with Organs;
with Session_Table;

package Turn_Cycle is

   use Ada.Strings.Unbounded;

   type Step_Status is (Ran, Skipped);

   type Step_Trace is record
      Status : Step_Status := Skipped;
      Detail : Unbounded_String;
      --  What the organ did; empty when the step was skipped
   end record;

   type Step_Traces is array (Cycle_Order.Step_Index) of Step_Trace;

   type Turn_Trace is record
      Turn      : Positive := 1;
      Energy    : Energy_Gate.Millis := 0;
      Passes    : Energy_Gate.Pass_Count := 1;
      Steps     : Step_Traces;
      Intent    : Organs.Intent_Kind := Organs.Chat;
      Route     : Unbounded_String;
      Coherence : Organs.Millis := 0;
      Drift     : Organs.Millis := 0;
      Output    : Unbounded_String;
   end record;

   procedure Run
     (Stub        : Organs.Fixture;
      Session     : in out Session_Table.Session;
      Session_Key : String;
      Input       : String;
      Trace       : out Turn_Trace)
   with
     Post =>
       Trace.Turn = Session.Turns
       and then
         (for all Step in Cycle_Order.Step_Index =>
            (if Cycle_Order.Phase (Step) in Cycle_Order.Pass_Phase then
               (Trace.Steps (Step).Status = Ran)
               = (Natural (Cycle_Order.Pass_Of (Step)) <= Trace.Passes)
             else Trace.Steps (Step).Status = Ran));
   --  Every step outside the passes runs; a pass runs iff it is within the
   --  prefix the energy gate allowed

end Turn_Cycle;
