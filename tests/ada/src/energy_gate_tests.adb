with AUnit.Assertions;
with Body_Config;
with Energy_Gate;
with Interfaces;
with Organs.Budget_Box;
with Organs.Drive_Box;
with Wall_Clocks;

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

   --  The derived curve (docs/energy.md), over every budget from one full
   --  turn to 200 calls and every count of calls left: E = 1 runs eight
   --  passes; the passes never fall as E rises, whether E moves with the
   --  calls left or alone under a fixed count of them; a turn never plans
   --  more calls than are left, and when it cannot pay for the cheapest
   --  turn it runs one pass; and the cut to the calls left never binds
   --  when E is the share of calls left (the derivation's claim).
   procedure Test_Budget_Curve (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for Asks_Intent in Boolean loop
         declare
            Curve : constant Threshold_Curve := Budget_Curve (Asks_Intent);
         begin
            Assert (Is_Valid (Curve), "the derived curve is valid");
            for Pass in 2 .. Pass_Index'Last loop
               Assert (Curve (Pass) > Curve (Pass - 1), "each pass costs a call more than the last");
            end loop;
            for Budget in Full_Turn_Calls (Asks_Intent) .. 200 loop
               declare
                  Previous : Pass_Count := 1;
               begin
                  for Left in 0 .. Budget loop
                     declare
                        Energy : constant Millis := Full * Left / Budget;
                        Passes : constant Pass_Count := Passes_Within (Curve, Energy, Left, Asks_Intent);
                     begin
                        Assert (Passes >= Previous, "more of the budget left never runs fewer passes");
                        if Can_Ask (Left, Asks_Intent) then
                           Assert (Planned_Calls (Passes, Asks_Intent) <= Left,
                                   "a turn plans no more calls than are left");
                        else
                           Assert (Passes = 1, "a turn that cannot pay for a call runs one pass");
                        end if;
                        Assert (Passes = Passes_For (Curve, Energy), "the cut to the calls left never binds");
                        Previous := Passes;
                     end;
                  end loop;
                  Assert (Previous = Pass_Total, "a full budget runs eight passes");
               end;
            end loop;
            for Left in 0 .. 40 loop
               declare
                  Previous : Pass_Count := 1;
               begin
                  for Energy in Millis loop
                     declare
                        Passes : constant Pass_Count := Passes_Within (Curve, Energy, Left, Asks_Intent);
                     begin
                        Assert (Passes >= Previous, "under fixed calls left, passes are monotone in E");
                        Previous := Passes;
                     end;
                  end loop;
               end;
            end loop;
         end;
      end loop;
      Assert (Planned_Calls (8, Asks_Intent => False) = 9 and then Planned_Calls (8, Asks_Intent => True) = 10,
              "a full turn is eight passes and the synthesis, and the intent when the model states it");
      Assert (Body_Config.Default_Budget_Calls = Body_Config.Default_Budget_Turns * Full_Turn_Calls (False),
              "the default budget, a static sum, is its full turns of the rules' intender");
   end Test_Budget_Curve;

   type Hand_Clock is limited new Wall_Clocks.Clock with record
      At_Ms : Wall_Clocks.Epoch_Ms := 1_000_000;
   end record;

   overriding function Now (Self : Hand_Clock) return Wall_Clocks.Epoch_Ms is (Self.At_Ms);

   overriding function Sensed_At (Self : Hand_Clock) return Wall_Clocks.Epoch_Ms is (Self.At_Ms);

   Hand : aliased Hand_Clock;
   --  The budget's clock, turned by the test

   --  Random budgets and histories, on the hand-turned clock: each turn
   --  plans its passes from the Drive-Box's snapshot, makes as many calls
   --  as it planned or fewer (a failed call still counts), and the clock
   --  moves on by a random step.  Held against a log kept here: no window
   --  of the budget's length ever holds more calls than the budget, the
   --  calls left are the budget less those of the turns within the window,
   --  a session with nothing in the window is full, and a drained one
   --  asks nothing.
   procedure Test_Budget_Histories (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use type Interfaces.Unsigned_64;
      use type Wall_Clocks.Epoch_Ms;
      Seed : Interfaces.Unsigned_64 := 16#9E37_79B9_7F4A_7C15#;

      function Next (Below : Positive) return Natural is
      begin
         Seed := Seed * 6364136223846793005 + 1442695040888963407;
         return Natural (Interfaces.Shift_Right (Seed, 33) mod Interfaces.Unsigned_64 (Below));
      end Next;

      Max_Turns : constant := 120;
      type Logged is record
         At_Ms : Wall_Clocks.Epoch_Ms;
         Calls : Natural;
      end record;
      type Log_Array is array (1 .. Max_Turns) of Logged;
   begin
      for History in 1 .. 200 loop
         declare
            Window_S : constant Positive := 1 + Next (30);
            Window : constant Positive := 1_000 * Window_S;
            --  The same window in milliseconds, for the log kept here
            Box : constant Organs.Budget_Box.Organ :=
              (Clock => Hand'Access,
               Limit => (Calls => Full_Turn_Calls (False) + Next (60), Window_S => Window_S, Tokens => 0));
            State : Organs.Drive_Box.Reservoir;
            Log : Log_Array;
            Last : Natural := 0;
         begin
            State := Box.Fresh ("anyone");
            for Turn in 1 .. Max_Turns loop
               declare
                  Now  : constant Organs.Drive_Box.Snapshot := Box.Snapshot_Of (State);
                  Used : Natural := 0;
                  Passes : Pass_Count;
                  Made : Natural;
               begin
                  for Earlier of Log (1 .. Last) loop
                     if Earlier.At_Ms + Wall_Clocks.Epoch_Ms (Window) > Hand.At_Ms then
                        Used := Used + Earlier.Calls;
                     end if;
                  end loop;
                  Assert (Now.Calls_Left = Box.Limit.Calls - Used, "the calls left are the budget less the window's");
                  Assert (Now.Budget.Calls_Used = Used, "the trace's calls used are the window's");
                  Assert (Now.Budget.Window_S = Window_S, "the trace's window is the operator's seconds");
                  Assert ((Used = 0) = (Organs.To_Millis (Now.Energy) = Full), "nothing in the window is full energy");
                  Passes := Passes_Within (Budget_Curve (False), Organs.To_Millis (Now.Energy), Now.Calls_Left, False);
                  Made := (if Can_Ask (Now.Calls_Left, False)
                           then Planned_Calls (Passes, False) - Next (2) else 0);
                  Assert (Made <= Now.Calls_Left, "a turn never makes more calls than are left");
                  Box.Spend (State, Passes, (Calls => Made, Tokens => 0));
                  if Made > 0 then
                     Last := Last + 1;
                     Log (Last) := (At_Ms => Hand.At_Ms, Calls => Made);
                  end if;
                  for Start of Log (1 .. Last) loop
                     declare
                        Within : Natural := 0;
                     begin
                        for Other of Log (1 .. Last) loop
                           if Other.At_Ms >= Start.At_Ms
                             and then Other.At_Ms < Start.At_Ms + Wall_Clocks.Epoch_Ms (Window)
                           then
                              Within := Within + Other.Calls;
                           end if;
                        end loop;
                        Assert (Within <= Box.Limit.Calls, "no window holds more calls than the budget");
                     end;
                  end loop;
                  Hand.At_Ms := Hand.At_Ms + Wall_Clocks.Epoch_Ms (Next (Window / 2));
               end;
            end loop;
         end;
      end loop;
   end Test_Budget_Histories;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Validity'Access, "curves are checked at start-up");
      Register_Routine (T, Test_Prefix_And_Monotone'Access, "energy gates a monotone prefix of passes");
      Register_Routine (T, Test_Budget_Curve'Access, "the derived curve keeps its invariants");
      Register_Routine (T, Test_Budget_Histories'Access, "a budget holds over random histories");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Energy_Gate");
   end Name;

end Energy_Gate_Tests;
