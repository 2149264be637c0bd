--  A1, the Drive-Box: each session's energy reservoir.
--
--  Contract any Drive-Box honours: Snapshot gives the energy the turn may
--  spend, in [0, 1], the terrain that goes with it and the model calls the
--  session may still make; Spend charges the passes that ran and the calls
--  they made; Recharge restores energy between turns.  Energy depends
--  on the session's own Reservoir, which the session's record keeps (L1),
--  and on nothing else but an injected clock (Organs.Budget_Box); every
--  operation is deterministic (the energy decides how many
--  passes run, L3, so a turn must be reproducible) and bounded by the
--  session's own reservoir, never by the body's other sessions.

with Ada.Containers.Vectors;
with Energy_Gate;
with Wall_Clocks;

package Organs.Drive_Box is

   type Terrain_Kind is (Depleted, Low, Steady, Charged);
   --  The energy's lie of the land, as the sense step reports it

   function Terrain_Name (Terrain : Terrain_Kind) return String is
     (case Terrain is
         when Depleted => "depleted",
         when Low => "low",
         when Steady => "steady",
         when Charged => "charged");

   function Terrain_Of (Energy : Fraction) return Terrain_Kind is
     (case To_Millis (Energy) is
         when 0 .. 249 => Depleted,
         when 250 .. 499 => Low,
         when 500 .. 749 => Steady,
         when others => Charged);
   --  The terrain every Drive-Box reports for an energy

   Unmetered : constant Natural := Natural'Last;
   --  The calls left of a session whose model calls no budget counts

   type Budget_View is record
      Metered      : Boolean := False;
      --  False: no budget counts the calls (--energy fixture); the rest
      --  is then 0
      Calls_Limit  : Natural := 0;
      Tokens_Limit : Natural := 0;
      --  0: tokens are not counted (no --budget-tokens)
      Window_S     : Natural := 0;
      Calls_Used   : Natural := 0;
      Tokens_Used  : Natural := 0;
      --  Spent within the window, before the turn
   end record;
   --  The session's budget as a turn found it, for its trace

   type Snapshot is record
      Energy     : Fraction;
      Terrain    : Terrain_Kind;
      Calls_Left : Natural := Unmetered;
      --  The model calls the session may still make now
      Budget     : Budget_View;
   end record;

   type Spent_Calls is record
      At_Ms  : Wall_Clocks.Epoch_Ms := 0;
      --  When the turn that made them ended
      Calls  : Natural := 0;
      Tokens : Natural := 0;
      --  As the client reported them (0 where it reported none)
   end record;
   --  One turn's model calls, in a session's budget log

   package Spent_Logs is new Ada.Containers.Vectors (Positive, Spent_Calls);

   type Reservoir is record
      Level : Fraction := 1.0;
      Held  : Boolean := False;
      --  The level is held where it is: neither spent nor recharged
      Log   : Spent_Logs.Vector;
      --  A budget's sliding log, oldest first: the turns that asked the
      --  model within the window (empty for a Drive-Box without a budget)
   end record;
   --  What a session keeps of its energy between turns

   type Turn_Use is record
      Calls  : Natural := 0;
      Tokens : Natural := 0;
   end record;
   --  The model calls a turn made and the tokens the client said they cost

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
      Passes : Energy_Gate.Pass_Count;
      Used   : Turn_Use) is abstract;
   --  After a turn, for the passes it ran and the model calls it made

end Organs.Drive_Box;
