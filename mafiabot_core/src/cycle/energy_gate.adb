package body Energy_Gate with SPARK_Mode => On is

   procedure Lemma_Valid_Never_Decreases (Curve : Threshold_Curve) is
   begin
      for Later in 2 .. Pass_Index'Last loop
         --  Every threshold before Later is at most Curve (Later - 1)
         --  (the invariant, one step back) and Curve (Later - 1) is at
         --  most Curve (Later) (Is_Valid): so all of them are at most
         --  Curve (Later), which is the invariant one step on.
         pragma Loop_Invariant
           (for all First in 1 .. Later - 1 =>
              (for all Between in First .. Later - 1 =>
                 Curve (First) <= Curve (Between)));
      end loop;
   end Lemma_Valid_Never_Decreases;

   function Passes_For (Curve : Threshold_Curve; Energy : Millis)
     return Pass_Count
   is
      Count : Pass_Count := 1;
   begin
      Lemma_Valid_Never_Decreases (Curve);
      for K in 2 .. Pass_Index'Last loop
         --  Every pass before K runs: pass 1 because Curve (1) = 0, each
         --  later one because the loop went on past it.  When pass K does
         --  not run, no later one does (Never_Decreases): the prefix ends.
         pragma Loop_Invariant (Count = Natural (K) - 1);
         pragma Loop_Invariant
           (for all Ran in 1 .. K - 1 => Runs (Curve, Energy, Ran));
         exit when not Runs (Curve, Energy, K);
         Count := Natural (K);
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
