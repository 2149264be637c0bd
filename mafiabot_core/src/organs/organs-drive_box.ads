--  A1, the Drive-Box: each session's energy reservoir.
--
--  Contract a real Drive-Box honours: Snapshot reports the energy the turn
--  may spend, in [0, 1], and the terrain that goes with it; Spend charges the
--  passes that ran; Recharge restores a fixed amount between turns.  Energy
--  depends on the session's own history only (law L1).

package Organs.Drive_Box is

   type Reservoir is private;

   function Fresh (Stub : Fixture; Session_Key : String) return Reservoir;
   --  A new session's reservoir: full, or the fixture's pinned energy

   function Energy (Self : Reservoir) return Millis;

   function Terrain (Self : Reservoir) return String;
   --  depleted, low, steady or charged

   procedure Recharge (Self : in out Reservoir; Stub : Fixture);
   procedure Spend
     (Self : in out Reservoir; Stub : Fixture; Passes : Energy_Gate.Pass_Count);

private

   type Reservoir is record
      Level  : Millis := Energy_Gate.Full;
      Pinned : Boolean := False;
   end record;

end Organs.Drive_Box;
