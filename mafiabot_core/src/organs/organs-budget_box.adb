with Ada.Containers;

package body Organs.Budget_Box is

   use type Wall_Clocks.Epoch_Ms;

   package Drive_Box renames Organs.Drive_Box;

   --  The window on the clock's scale: the one conversion of the
   --  operator's seconds to milliseconds
   function Window_Ms (Self : Organ) return Wall_Clocks.Epoch_Ms is
     (Wall_Clocks.Epoch_Ms (Self.Limit.Window_S) * 1000);

   --  Whether a turn logged at Spent is still within the window at Now
   function Is_Live
     (Self : Organ; Spent : Drive_Box.Spent_Calls; Now : Wall_Clocks.Epoch_Ms)
      return Boolean is
     (Spent.At_Ms + Window_Ms (Self) > Now);

   --  The share of Limit that Used leaves, in thousandths rounded down
   function Share_Left (Used, Limit : Natural) return Energy_Gate.Millis is
     (if Used >= Limit then 0
      else Energy_Gate.Millis
             ((Long_Long_Integer (Limit - Used) * Long_Long_Integer (Energy_Gate.Full))
              / Long_Long_Integer (Limit)));

   --  A + B, held at Cap
   function Capped (A, B, Cap : Natural) return Natural is
     (Natural (Long_Long_Integer'Min
                 (Long_Long_Integer (Cap),
                  Long_Long_Integer (A) + Long_Long_Integer (B))));

   overriding function Fresh (Self : Organ; Session_Key : String)
     return Drive_Box.Reservoir
   is
      pragma Unreferenced (Self, Session_Key);
   begin
      return (Level => 1.0, Held => False, Log => <>);
   end Fresh;

   overriding function Snapshot_Of
     (Self : Organ; State : Drive_Box.Reservoir) return Drive_Box.Snapshot
   is
      Now    : constant Wall_Clocks.Epoch_Ms := Self.Clock.Sensed_At;
      Calls  : Natural := 0;
      Tokens : Natural := 0;
      Energy : Energy_Gate.Millis;
   begin
      for Spent of State.Log loop
         if Is_Live (Self, Spent, Now) then
            Calls := Capped (Calls, Spent.Calls, Max_Calls);
            Tokens := Capped (Tokens, Spent.Tokens, Max_Tokens);
         end if;
      end loop;
      Energy := Share_Left (Calls, Self.Limit.Calls);
      if Self.Limit.Tokens > 0 then
         Energy := Natural'Min (Energy, Share_Left (Tokens, Self.Limit.Tokens));
      end if;
      return
        (Energy     => To_Fraction (Energy),
         Terrain    => Drive_Box.Terrain_Of (To_Fraction (Energy)),
         Calls_Left =>
           (if Self.Limit.Tokens > 0 and then Tokens >= Self.Limit.Tokens
            then 0
            else Self.Limit.Calls - Natural'Min (Calls, Self.Limit.Calls)),
         Budget     =>
           (Metered      => True,
            Calls_Limit  => Self.Limit.Calls,
            Tokens_Limit => Self.Limit.Tokens,
            Window_S     => Self.Limit.Window_S,
            Calls_Used   => Calls,
            Tokens_Used  => Tokens));
   end Snapshot_Of;

   --  Drop the turns at the log's head that the window has passed: the log
   --  is oldest first, so they are a prefix
   procedure Forget_Passed
     (Self : Organ; State : in out Drive_Box.Reservoir;
      Now  : Wall_Clocks.Epoch_Ms)
   is
      Passed : Natural := 0;
   begin
      for Spent of State.Log loop
         exit when Is_Live (Self, Spent, Now);
         Passed := Passed + 1;
      end loop;
      if Passed > 0 then
         State.Log.Delete_First (Ada.Containers.Count_Type (Passed));
      end if;
   end Forget_Passed;

   overriding procedure Recharge
     (Self : Organ; State : in out Drive_Box.Reservoir) is
   begin
      --  At the time the turn senses at, so that the snapshot after it
      --  still counts what was live then
      Forget_Passed (Self, State, Self.Clock.Sensed_At);
   end Recharge;

   overriding procedure Spend
     (Self   : Organ;
      State  : in out Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count;
      Used   : Drive_Box.Turn_Use)
   is
      pragma Unreferenced (Passes);
      --  A budget counts calls, whatever passes they were for
      Now : constant Wall_Clocks.Epoch_Ms := Self.Clock.Now;
   begin
      Forget_Passed (Self, State, Now);
      if Used.Calls > 0 then
         --  A clock set back must not put a turn before an older one: the
         --  log stays in order, and a slot is never freed early
         State.Log.Append
           (Drive_Box.Spent_Calls'
             (At_Ms  => (if State.Log.Is_Empty then Now
                        else Wall_Clocks.Epoch_Ms'Max
                               (Now, State.Log.Last_Element.At_Ms)),
              Calls  => Used.Calls,
              Tokens => Used.Tokens));
      end if;
      State.Level := Snapshot_Of (Self, State).Energy;
   end Spend;

end Organs.Budget_Box;
