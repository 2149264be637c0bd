--  The wall clock a model budget is counted on: milliseconds since the Unix
--  epoch, so that a call logged by one body is still dated right when
--  another body, or the same after a restart, reads it from the store.
--  Injected (an interface), so that a test turns time by hand.

package Wall_Clocks is

   type Epoch_Ms is range 0 .. 2**62;
   --  Milliseconds since 1970-01-01 00:00 UTC

   type Clock is limited interface;

   function Now (Self : Clock) return Epoch_Ms is abstract;

   type Clock_Access is access constant Clock'Class;

   type System_Clock is limited new Clock with null record;
   --  The machine's own (Ada.Calendar): a clock set back makes a logged
   --  call look younger, so its slot is held longer, never shorter

   overriding function Now (Self : System_Clock) return Epoch_Ms;

end Wall_Clocks;
