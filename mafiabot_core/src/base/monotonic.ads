--  A monotonic clock (CLOCK_MONOTONIC) in microseconds, for the deadlines of
--  a sampled turn.  Not Ada.Real_Time: with it comes the elaboration of the
--  tasking runtime's task information before the first reply of every
--  body, for a clock a stub body never reads.

package Monotonic is

   type Instant is range -2**62 .. 2**62;
   --  Microseconds since some fixed start (the boot of the machine, say)

   Never : constant Instant := Instant'Last;
   --  A deadline that does not come

   function Now return Instant;

   function After (Millis : Natural) return Instant is
     (Now + Instant (Millis) * 1000);
   --  Millis from now

end Monotonic;
