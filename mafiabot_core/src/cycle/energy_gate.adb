package body Energy_Gate with SPARK_Mode => On is

   function Passes_For (Curve : Threshold_Curve; Energy : Millis)
     return Pass_Count
   is
      Count : Pass_Count := 1;
   begin
      for K in 2 .. Pass_Index'Last loop
         pragma Loop_Invariant (Count = Natural (K) - 1);
         --  The curve never decreases, so the first pass that does not run
         --  ends the prefix: no later pass can run either.
         exit when not Runs (Curve, Energy, K);
         Count := Natural (K);
      end loop;
      return Count;
   end Passes_For;

   function First_Violation (Curve : Threshold_Curve) return Pass_Index is
   begin
      if Curve (1) /= 0 then
         return 1;
      end if;
      for K in 2 .. Pass_Index'Last loop
         if Curve (K - 1) > Curve (K) then
            return K;
         end if;
      end loop;
      --  Unreachable under the precondition
      return Pass_Index'Last;
   end First_Violation;

end Energy_Gate;
