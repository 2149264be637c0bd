--  The energy gate of law L3: Energy decides how many of the eight passes
--  run, never which ones or in what order.  Pass K runs iff E >= the curve's
--  threshold K; a valid curve starts at 0 and never decreases, so the passes
--  that run are always a prefix of the static order, at least one runs, and
--  all eight run at full energy.
--
--  Written for the prover (docs/spark.md): no state (Global => null on
--  every declaration), no exceptions, the bounds in range subtypes, and the
--  step from the curve's definition (each threshold at most the next) to
--  what the passes need of it (each at most every later one) taken by a
--  Ghost lemma rather than left to the prover.

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

   function Never_Decreases (Curve : Threshold_Curve) return Boolean is
     (for all First in Pass_Index =>
        (for all Later in First .. Pass_Index'Last =>
           Curve (First) <= Curve (Later)))
   with Ghost, Global => null;
   --  Each threshold is at most every later one: what Is_Valid's pairwise
   --  form implies, by induction, and what a prefix needs

   procedure Lemma_Valid_Never_Decreases (Curve : Threshold_Curve)
   with
     Ghost,
     Global => null,
     Pre    => Is_Valid (Curve),
     Post   => Never_Decreases (Curve);
   --  The induction, as a loop the prover can follow

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
