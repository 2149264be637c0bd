--  The organs the Ada tests run the cycle with: the stub organs of the
--  fixture the body ships, chosen through the same seam the boot uses, and
--  a second implementation of three organs, written here from their specs
--  alone, which the cycle must run unchanged:
--  - Still_Drive_Box: a Drive-Box whose energy never moves;
--  - Verbose_Cognition: a cognition whose thoughts run far past their
--    bound, in two-byte characters, so the cut must fall between them;
--  - Eager_Intender: an intender that always acts, on a long basis that
--    starts with the packed schema it was given.

with Energy_Gate;
with Organs;
with Organs.Cognition;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Sets;
with Organs.Texts;

package Test_Organs is

   Fixture_Path : constant String := "stubs/organs/default.json";
   --  The tests run from the checkout's root

   function Stub_Set return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Stub_Set'Result);
   --  The stub organs of the shipped fixture, loaded once

   function Stub_Curve return Energy_Gate.Threshold_Curve
   with Post => Energy_Gate.Is_Valid (Stub_Curve'Result);

   type Still_Drive_Box (Energy : Organs.Millis) is
     limited new Organs.Drive_Box.Organ with null record;

   overriding function Fresh
     (Self : Still_Drive_Box; Session_Key : String)
      return Organs.Drive_Box.Reservoir;

   overriding function Snapshot_Of
     (Self : Still_Drive_Box; State : Organs.Drive_Box.Reservoir)
      return Organs.Drive_Box.Snapshot;

   overriding procedure Recharge
     (Self : Still_Drive_Box; State : in out Organs.Drive_Box.Reservoir) is null;

   overriding procedure Spend
     (Self   : Still_Drive_Box;
      State  : in out Organs.Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count) is null;

   E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);

   type Verbose_Cognition (Thought_Bytes : Positive) is
     limited new Organs.Cognition.Organ with null record;
   --  Each thought: Thought_Bytes bytes, E_Acute after a one-byte lead

   overriding function Move_Name
     (Self : Verbose_Cognition; Way : Organs.Direction; Rank : Organs.Quarter)
      return Organs.Name_Text;
   --  "down-1" .. "down-4", "up-1" .. "up-4"

   overriding procedure Reason
     (Self    : Verbose_Cognition;
      Way     : Organs.Direction;
      Rank    : Organs.Quarter;
      Focus   : String;
      Draw    : Organs.Texts.Part;
      Thought : in out Organs.Texts.Store);

   Eager_Basis : constant String (1 .. 500) := [others => 'w'];

   type Eager_Intender is limited new Organs.Intender.Organ with null record;

   overriding procedure State_Intent
     (Self          : Eager_Intender;
      Input         : String;
      Packed_Schema : String;
      Intent        : out Organs.Intent_Kind;
      Basis         : in out Organs.Texts.Store);
   --  Always Act, on Packed_Schema & Eager_Basis

   function Second_Set (Energy : Organs.Millis; Thought_Bytes : Positive)
     return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Second_Set'Result);
   --  The stub organs, but for the three above

end Test_Organs;
