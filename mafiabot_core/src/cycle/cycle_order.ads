--  The static order of the cycle (law L3).  Every turn walks these 23 steps
--  in this order; Energy only decides which of the eight passes (steps 3 to
--  18) run, and those that do are always a prefix.  Nothing at run time can
--  reorder, add or remove a step: the table is a constant.

with Energy_Gate;

package Cycle_Order is

   type Step_Index is range 1 .. 23;

   type Phase_Kind is
     (Scope, Sense, Draw, Reason, Pack, Intend, Route, Synthesize, Cohere);

   subtype Pass_Phase is Phase_Kind range Draw .. Reason;

   function Phase (Step : Step_Index) return Phase_Kind is
     (case Step is
         when 1 => Scope,
         when 2 => Sense,
         when 3 .. 18 => (if Step mod 2 = 1 then Draw else Reason),
         when 19 => Pack,
         when 20 => Intend,
         when 21 => Route,
         when 22 => Synthesize,
         when 23 => Cohere);

   function Pass_Of (Step : Step_Index) return Energy_Gate.Pass_Index is
     (Energy_Gate.Pass_Index ((Step - 3) / 2 + 1))
   with Pre => Phase (Step) in Pass_Phase;
   --  Steps 3-4 are pass 1, ..., steps 17-18 pass 8

   function Runs
     (Step : Step_Index; Passes : Energy_Gate.Pass_Count) return Boolean is
     (Phase (Step) not in Pass_Phase
      or else Natural (Pass_Of (Step)) <= Passes);
   --  Whether Step runs in a turn of Passes passes: every step outside the
   --  passes, and the passes within the prefix the energy gate allowed

   --  The model calls a turn plans.  A turn of a model-backed cognition
   --  asks its model once at each step below that runs, never more: this
   --  is the one place that count is said (the cycle records exactly these
   --  calls, Turn_Cycle.Run's postcondition; a budget plans a turn by it).

   function Asks_Model (Step : Step_Index; Intent_Asked : Boolean)
     return Boolean is
     (case Phase (Step) is
         when Reason | Synthesize => True,
         when Intend => Intent_Asked,
         when Scope | Sense | Draw | Pack | Route | Cohere => False);
   --  Whether Step is one question to the model: a pass's reasoning, the
   --  synthesis, and the intent when the intender asks the model
   --  (Intent_Asked: --intent model)

   Max_Model_Calls : constant :=
     Energy_Gate.Pass_Total + Energy_Gate.Synthesis_Calls
     + Energy_Gate.Intent_Calls;
   --  The most model calls a turn plans, Energy_Gate.Full_Turn_Calls with
   --  the intent asked (eight passes, the intent and the synthesis), as a
   --  static bound for the arrays that hold a turn's calls.  That
   --  Energy_Gate.Planned_Calls is the number of steps that run (Runs) and
   --  ask (Asks_Model) is a fact of the constant order over 16 inputs, held
   --  for every one of them by the Ada tests (Model_Intender_Tests) rather
   --  than recounted over the 23 steps on every turn

   function Name (Step : Step_Index) return String;
   --  "scope", "sense", "descent-1-draw", "descent-1-reason", ...,
   --  "ascent-4-reason", "pack", "intend", "route", "synthesize", "cohere"

   function Organ (Step : Step_Index) return String;
   --  The organ (or organs) behind the step, by design-card code

end Cycle_Order;
