--  The wall clock a model budget is counted on: milliseconds since the Unix
--  epoch, so that a call logged by one body is still dated right when
--  another body, or the same after a restart, reads it from the store.
--  Injected (an interface), so that a test turns time by hand.

package Wall_Clocks is

   type Epoch_Ms is range 0 .. 2**62;
   --  Milliseconds since 1970-01-01 00:00 UTC

   type Clock is limited interface;

   function Now (Self : Clock) return Epoch_Ms is abstract;

   function Sensed_At (Self : Clock) return Epoch_Ms is abstract
   with Post'Class => Sensed_At'Result <= Self.Now;
   --  The time a turn senses its energy at: Now, but for a turn that runs
   --  in rounds of its client's (Turn_Clock), the time of its first round,
   --  so that every round of one turn plans the same passes

   type Clock_Access is access constant Clock'Class;

   type System_Clock is limited new Clock with null record;
   --  The machine's own (Ada.Calendar): a clock set back makes a logged
   --  call look younger, so its slot is held longer, never shorter

   overriding function Now (Self : System_Clock) return Epoch_Ms;

   overriding function Sensed_At (Self : System_Clock) return Epoch_Ms is
     (Self.Now);

   type Turn_Clock is limited new Clock with private;
   --  The machine's clock, whose Sensed_At the thinker of a turn in rounds
   --  pins to the turn's first round (never later than Now)

   overriding function Now (Self : Turn_Clock) return Epoch_Ms;

   overriding function Sensed_At (Self : Turn_Clock) return Epoch_Ms;

   procedure Pin (Self : in out Turn_Clock; First_Round : Epoch_Ms);
   --  The turn now starting is a later round of one that began at
   --  First_Round (a time in the future counts as Now)

   procedure Unpin (Self : in out Turn_Clock);
   --  The turn now starting senses at Now

private

   type Turn_Clock is limited new Clock with record
      Machine : System_Clock;
      Pinned  : Boolean := False;
      First   : Epoch_Ms := 0;
   end record;

end Wall_Clocks;
