with AUnit.Assertions;
with Energy_Gate;

package body Energy_Gate_Tests is

   use AUnit.Assertions;
   use Energy_Gate;

   Default_Curve : constant Threshold_Curve := [0, 125, 250, 375, 500, 625, 750, 875];
   Flat_Curve    : constant Threshold_Curve := [others => 0];
   Steep_Curve   : constant Threshold_Curve := [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000];
   Uneven_Curve  : constant Threshold_Curve := [0, 0, 300, 300, 301, 999, 1000, 1000];

   procedure Test_Validity (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Assert (Is_Valid (Default_Curve), "the default curve is valid");
      Assert (Is_Valid (Flat_Curve), "a flat curve at 0 is valid");
      Assert (not Is_Valid ([100, 200, 300, 400, 500, 600, 700, 800]),
              "a first threshold above 0 is refused");
      Assert (First_Violation ([100, 200, 300, 400, 500, 600, 700, 800]) = 1, "and named as pass 1");
      Assert (not Is_Valid ([0, 500, 400, 600, 700, 800, 900, 1000]),
              "a decreasing curve is refused");
      Assert (First_Violation ([0, 500, 400, 600, 700, 800, 900, 1000]) = 3,
              "and named at the pass that decreases");
   end Test_Validity;

   --  Over every energy level and several curves: the passes are a prefix,
   --  their count never falls as energy rises, at least one runs, all eight
   --  at full energy.
   procedure Test_Prefix_And_Monotone (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      type Curve_List is array (Positive range <>) of Threshold_Curve;
      Curves : constant Curve_List := [Default_Curve, Flat_Curve, Steep_Curve, Uneven_Curve];
   begin
      for Curve of Curves loop
         declare
            Previous : Pass_Count := 1;
         begin
            for Energy in Millis loop
               declare
                  Count : constant Pass_Count := Passes_For (Curve, Energy);
               begin
                  Assert (Count >= Previous, "more energy never runs fewer passes");
                  for Pass in Pass_Index loop
                     Assert (Runs (Curve, Energy, Pass) = (Natural (Pass) <= Count),
                             "the passes that run are the prefix 1 .." & Count'Image);
                  end loop;
                  Previous := Count;
               end;
            end loop;
            Assert (Passes_For (Curve, 0) = 1 or else Curve (2) = 0, "one pass at zero energy unless the curve lets more run");
            Assert (Passes_For (Curve, Full) = 8, "eight passes at full energy");
         end;
      end loop;
      Assert (Passes_For (Default_Curve, 624) = 5 and then Passes_For (Default_Curve, 625) = 6,
              "a threshold is inclusive");
   end Test_Prefix_And_Monotone;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Validity'Access, "curves are checked at start-up");
      Register_Routine (T, Test_Prefix_And_Monotone'Access, "energy gates a monotone prefix of passes");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Energy_Gate");
   end Name;

end Energy_Gate_Tests;
