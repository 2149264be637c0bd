package body Organs.Drive_Box is

   function Fresh (Stub : Fixture; Session_Key : String) return Reservoir is
   begin
      for Pin of Stub.Pins loop
         if To_String (Pin.Key) = Session_Key then
            return (Level => Pin.Energy, Pinned => True);
         end if;
      end loop;
      return (Level => Stub.Initial_Energy, Pinned => False);
   end Fresh;

   function Energy (Self : Reservoir) return Millis is (Self.Level);

   function Terrain (Self : Reservoir) return String is
     (case Self.Level is
         when 0 .. 249 => "depleted",
         when 250 .. 499 => "low",
         when 500 .. 749 => "steady",
         when others => "charged");

   procedure Recharge (Self : in out Reservoir; Stub : Fixture) is
   begin
      if not Self.Pinned then
         Self.Level :=
           Natural'Min (Energy_Gate.Full, Self.Level + Stub.Recharge_Per_Turn);
      end if;
   end Recharge;

   procedure Spend
     (Self : in out Reservoir; Stub : Fixture; Passes : Energy_Gate.Pass_Count)
   is
   begin
      if not Self.Pinned then
         Self.Level :=
           Natural'Max (0, Self.Level - Passes * Stub.Cost_Per_Pass);
      end if;
   end Spend;

end Organs.Drive_Box;
