with Interfaces.C;

package body Monotonic is

   type Time_Spec is record
      Seconds     : Interfaces.C.long;
      Nanoseconds : Interfaces.C.long;
   end record
   with Convention => C;

   function Clock_Gettime
     (Clock : Interfaces.C.int; Result : access Time_Spec)
      return Interfaces.C.int
   with Import, Convention => C, External_Name => "clock_gettime";

   Clock_Monotonic : constant := 1;

   function Now return Instant is
      Reading : aliased Time_Spec := (0, 0);
      Status  : constant Interfaces.C.int :=
        Clock_Gettime (Clock_Monotonic, Reading'Access);
      pragma Unreferenced (Status);
      --  CLOCK_MONOTONIC cannot fail on Linux; a failure would leave 0
   begin
      return Instant (Reading.Seconds) * 1_000_000
        + Instant (Reading.Nanoseconds) / 1000;
   end Now;

end Monotonic;
