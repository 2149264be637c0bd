--  A1, the Drive-Box: each session's energy reservoir.
--
--  Contract any Drive-Box honours: Snapshot gives the energy the turn may
--  spend, in [0, 1], and the terrain that goes with it; Spend charges the
--  passes that ran; Recharge restores energy between turns.  Energy depends
--  on the session's own Reservoir only, which the session's record keeps
--  (L1), and every operation is deterministic and costs constant time: the
--  energy decides how many passes run (L3), so a turn must be reproducible.

with Energy_Gate;

package Organs.Drive_Box is

   type Terrain_Kind is (Depleted, Low, Steady, Charged);
   --  The energy's lie of the land, as the sense step reports it

   function Terrain_Name (Terrain : Terrain_Kind) return String is
     (case Terrain is
         when Depleted => "depleted",
         when Low => "low",
         when Steady => "steady",
         when Charged => "charged");

   type Snapshot is record
      Energy  : Fraction;
      Terrain : Terrain_Kind;
   end record;

   type Reservoir is record
      Level : Fraction := 1.0;
      Held  : Boolean := False;
      --  The level is held where it is: neither spent nor recharged
   end record;
   --  What a session keeps of its energy between turns

   type Organ is limited interface;

   function Fresh (Self : Organ; Session_Key : String) return Reservoir
   is abstract;
   --  A new session's reservoir, a function of its key alone

   function Snapshot_Of (Self : Organ; State : Reservoir) return Snapshot
   is abstract;

   procedure Recharge (Self : Organ; State : in out Reservoir) is abstract;
   --  Between two turns of the session

   procedure Spend
     (Self   : Organ;
      State  : in out Reservoir;
      Passes : Energy_Gate.Pass_Count) is abstract;
   --  After a turn, for the passes it ran

end Organs.Drive_Box;
