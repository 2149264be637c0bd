package body Energy_Gate with SPARK_Mode => On is

   function Passes_For (Curve : Threshold_Curve; Energy : Millis)
     return Pass_Count
   is
      Count : Pass_Count := 1;
   begin
      for K in 2 .. Pass_Index'Last loop
         --  The passes before K that run are exactly 1 .. Count (pass 1
         --  runs: Curve (1) = 0).  If pass K runs, so does pass K - 1, whose
         --  threshold is at most K's (Is_Valid): Count is K - 1 and the
         --  prefix grows to K.  If it does not, the prefix ends before K.
         --  Each step takes one pair of Is_Valid, so no induction over the
         --  curve is needed, and no lemma runs a turn.
         pragma Loop_Invariant (Count <= Natural (K) - 1);
         pragma Loop_Invariant
           (for all Before in 1 .. K - 1 =>
              Runs (Curve, Energy, Before) = (Natural (Before) <= Count));
         if Runs (Curve, Energy, K) then
            Count := Natural (K);
         end if;
      end loop;
      return Count;
   end Passes_For;

   function Passes_Within
     (Curve       : Threshold_Curve;
      Energy      : Millis;
      Calls_Left  : Natural;
      Asks_Intent : Boolean) return Pass_Count
   is
      Gated      : constant Pass_Count := Passes_For (Curve, Energy);
      Overhead   : constant Natural := Planned_Calls (1, Asks_Intent) - 1;
   begin
      if not Can_Ask (Calls_Left, Asks_Intent) then
         return 1;
      end if;
      --  Calls_Left >= 1 + Overhead here, so the cut is at least one pass
      return Natural'Min (Gated, Calls_Left - Overhead);
   end Passes_Within;

   function First_Violation (Curve : Threshold_Curve) return Pass_Index is
   begin
      if Curve (1) /= 0 then
         return 1;
      end if;
      for K in 2 .. Pass_Index'Last loop
         --  No pair before K breaks the curve: the loop would have left
         --  at it
         pragma Loop_Invariant
           (for all J in 2 .. K - 1 => Curve (J - 1) <= Curve (J));
         if Curve (K - 1) > Curve (K) then
            return K;
         end if;
      end loop;
      --  The loop found no broken pair and Curve (1) = 0: the curve is
      --  valid (the first assertion, from the invariant's last step), which
      --  the precondition excludes (the second).  The prover so sees that
      --  the return below is never reached and its postcondition holds
      --  vacuously; at run time the checked precondition keeps it so.
      pragma Assert (Is_Valid (Curve));
      pragma Assert (False);
      return Pass_Index'Last;
   end First_Violation;

end Energy_Gate;
