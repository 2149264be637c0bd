with Ada.Calendar.Arithmetic;
with Ada.Calendar.Formatting;

package body Wall_Clocks is

   Epoch : constant Ada.Calendar.Time :=
     Ada.Calendar.Formatting.Time_Of (1970, 1, 1, 0.0, Time_Zone => 0);

   overriding function Now (Self : System_Clock) return Epoch_Ms is
      pragma Unreferenced (Self);
      use type Ada.Calendar.Time;
      Days    : Ada.Calendar.Arithmetic.Day_Count;
      Seconds : Duration;
      Leap    : Ada.Calendar.Arithmetic.Leap_Seconds_Count;
      At_Now  : constant Ada.Calendar.Time := Ada.Calendar.Clock;
   begin
      if At_Now < Epoch then
         return 0;
      end if;
      Ada.Calendar.Arithmetic.Difference (At_Now, Epoch, Days, Seconds, Leap);
      return Epoch_Ms (Days) * 86_400_000
        + Epoch_Ms (Long_Long_Integer (Seconds * 1000.0));
   end Now;

end Wall_Clocks;
