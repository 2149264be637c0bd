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

   overriding function Now (Self : Turn_Clock) return Epoch_Ms is
     (Self.Machine.Now);

   overriding function Sensed_At (Self : Turn_Clock) return Epoch_Ms is
      At_Now : constant Epoch_Ms := Self.Machine.Now;
   begin
      return (if Self.Pinned then Epoch_Ms'Min (Self.First, At_Now)
              else At_Now);
   end Sensed_At;

   procedure Pin (Self : in out Turn_Clock; First_Round : Epoch_Ms) is
   begin
      Self.Pinned := True;
      Self.First := First_Round;
   end Pin;

   procedure Unpin (Self : in out Turn_Clock) is
   begin
      Self.Pinned := False;
   end Unpin;

end Wall_Clocks;
