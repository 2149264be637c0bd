--  The energy gate of law L3: Energy decides how many of the eight passes
--  run, never which ones or in what order.  Pass K runs iff E >= the curve's
--  threshold K; a valid curve starts at 0 and never decreases, so the passes
--  that run are always a prefix of the static order, at least one runs, and
--  all eight run at full energy.
--
--  Written for the prover (docs/spark.md): no state (Global => null on
--  every declaration), no exceptions, the bounds in range subtypes, and
--  Passes_For's loop taking one step of the curve's definition (each
--  threshold at most the next) per pass, so the prover needs no induction
--  over the curve.

with Thousandths;

package Energy_Gate with SPARK_Mode => On is

   subtype Millis is Thousandths.Count;
   --  Energy and thresholds in thousandths: integer arithmetic keeps every
   --  turn byte-for-byte reproducible

   Full : constant Millis := 1000;

   Pass_Total : constant := 8;
   --  The passes of the cycle: four of descent, four of ascent

   type Pass_Index is range 1 .. Pass_Total;
   subtype Pass_Count is Natural range 1 .. Pass_Total;

   type Threshold_Curve is array (Pass_Index) of Millis;

   function Is_Valid (Curve : Threshold_Curve) return Boolean is
     (Curve (1) = 0
      and then (for all K in 2 .. Pass_Index'Last =>
                  Curve (K - 1) <= Curve (K)))
   with Global => null;
   --  The start-up check: the first pass always runs and the curve never
   --  decreases (every threshold lies in [0, 1] by its subtype)

   function Runs (Curve : Threshold_Curve; Energy : Millis; Pass : Pass_Index)
     return Boolean is (Energy >= Curve (Pass))
   with Global => null;
   --  Whether Pass runs at Energy.  Defined for any curve, so it asks for
   --  none: where a prefix is claimed of it (Passes_For), that claim's own
   --  precondition holds the curve valid.

   function Passes_For (Curve : Threshold_Curve; Energy : Millis)
     return Pass_Count
   with
     Global => null,
     Pre    => Is_Valid (Curve),
     Post   =>
       (for all K in Pass_Index =>
          Runs (Curve, Energy, K) = (Natural (K) <= Passes_For'Result))
       and then (if Energy = Full then Passes_For'Result = Pass_Total);
   --  How many passes run at Energy: exactly the prefix 1 .. result

   ---------------------------------------------------------------------
   --  The model calls a turn plans, and the curve derived from them
   --  (docs/energy.md): with --energy budget the thresholds are not
   --  asserted but computed from what each pass costs in model calls, so
   --  that the passes a turn plans never cost more calls than its session
   --  has left.

   Synthesis_Calls : constant := 1;
   --  A turn asks its model once for the synthesis, whatever its passes

   Intent_Calls : constant := 1;
   --  And once for the intent when the model states it (--intent model),
   --  whatever its energy

   function Planned_Calls
     (Passes : Pass_Count; Asks_Intent : Boolean) return Positive
   is (Passes + Synthesis_Calls + (if Asks_Intent then Intent_Calls else 0))
   with Global => null;
   --  How many model calls a turn of Passes passes plans: one a pass, one
   --  for the synthesis, and one for the intent when the model states it
   --  (--intent model).  The one count the cycle's bound on calls, the
   --  budget's start-up check and the gate's cap are all read from.

   function Full_Turn_Calls (Asks_Intent : Boolean) return Positive is
     (Planned_Calls (Pass_Total, Asks_Intent))
   with Global => null;
   --  What a turn of all eight passes plans: the least budget a session
   --  may be given (a smaller one could never run a full turn, E = 1)

   function Can_Ask (Calls_Left : Natural; Asks_Intent : Boolean)
     return Boolean is (Calls_Left >= Planned_Calls (1, Asks_Intent))
   with Global => null;
   --  Whether a session with Calls_Left calls can afford the cheapest turn
   --  that asks its model: else the turn runs one pass and asks nothing

   function Budget_Threshold (Pass : Pass_Index; Asks_Intent : Boolean)
     return Millis is
     (if Pass = 1 then 0
      else (Full * Planned_Calls (Natural (Pass), Asks_Intent)
            + Full_Turn_Calls (Asks_Intent) - 1)
           / Full_Turn_Calls (Asks_Intent))
   with Global => null;
   --  Pass K (K > 1) runs iff E >= ceiling (Full * calls (K) / calls (8)):
   --  the share of a full turn's calls that a turn of K passes spends is
   --  at most the share of the budget the session has left

   function Budget_Curve (Asks_Intent : Boolean) return Threshold_Curve is
     ([for Pass in Pass_Index => Budget_Threshold (Pass, Asks_Intent)])
   with Global => null,
        Post   => Is_Valid (Budget_Curve'Result)
                  and then Budget_Curve'Result (Pass_Index'Last) = Full;
   --  The derived curve: valid (it starts at 0 and the calls grow with
   --  the passes) and 1 at the last pass, so E = 1 runs all eight

   function Passes_Within
     (Curve       : Threshold_Curve;
      Energy      : Millis;
      Calls_Left  : Natural;
      Asks_Intent : Boolean) return Pass_Count
   with
     Global => null,
     Pre    => Is_Valid (Curve),
     Post   =>
       (declare
          Gated : constant Pass_Count := Passes_For (Curve, Energy);
        begin
          Passes_Within'Result <= Gated
          and then (if Can_Ask (Calls_Left, Asks_Intent)
                    then Planned_Calls (Passes_Within'Result, Asks_Intent)
                           <= Calls_Left
                    else Passes_Within'Result = 1)
          and then (if Planned_Calls (Gated, Asks_Intent) <= Calls_Left
                    then Passes_Within'Result = Gated));
   --  The passes a turn plans at Energy with Calls_Left model calls left:
   --  the gate's, cut to what the calls left pay for (at least one).  The
   --  cut never binds on the derived curve with E the share of calls left
   --  (docs/energy.md); it makes the bound hold whatever E is

   function First_Violation (Curve : Threshold_Curve) return Pass_Index
   with
     Global => null,
     Pre    => not Is_Valid (Curve),
     Post   =>
       (if First_Violation'Result = 1 then Curve (1) /= 0
        else Curve (First_Violation'Result - 1)
               > Curve (First_Violation'Result));
   --  The pass whose threshold breaks the curve, for the start-up message

end Energy_Gate;
