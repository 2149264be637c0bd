--  A1 from the operator's budget (--energy budget): a Drive-Box whose
--  energy is the share of the session's model budget left.  A session may
--  make Calls model calls (and, if Tokens > 0, spend Tokens tokens as the
--  client reports them) in any Window_S seconds; the log is a sliding one:
--  the calls of a turn hold their slots until Window_S after the turn ended
--  (at least that long after each was made), then free them, one turn's
--  at a time.  Not a token bucket, which would let a session spend twice
--  its budget across a window's edge.
--
--  It honours Organs.Drive_Box's contract, with time as one more input:
--  it reads the injected Clock and is deterministic given what it reads
--  (Snapshot_Of and Recharge the time the turn senses at, so that a turn
--  in rounds plans every round as its first did; Spend also Now, when the
--  turn ends, at which its calls are logged), in time linear in the log
--  (one entry a turn that called the model, at most Calls of them); the
--  log is the session's own (its Reservoir, L1), so one room's chatter
--  never drains another's passes.  E = the smaller of the
--  shares of calls and of tokens left, in thousandths rounded down; the
--  calls left are what the window still allows, none once the tokens are
--  spent.  A session never spends past its budget by more than the last
--  turn's tokens (the body cannot know a reply's cost before it comes).

with Energy_Gate;
with Wall_Clocks;
with Organs.Drive_Box;

package Organs.Budget_Box is

   Max_Calls     : constant := 1_000_000;
   Max_Window_S  : constant := 7 * 86_400;
   Max_Tokens    : constant := 1_000_000_000;

   type Limits is record
      Calls    : Positive range 1 .. Max_Calls;
      Window_S : Positive range 1 .. Max_Window_S;
      --  The sliding window in seconds, as the operator gives it; the
      --  organ compares it with the clock's milliseconds in one place
      Tokens   : Natural range 0 .. Max_Tokens;
      --  0: tokens are not counted
   end record;
   --  No defaults: the body's are Body_Config's (Default_Budget_*), and a
   --  budget is always given whole

   type Organ (Clock : not null Wall_Clocks.Clock_Access) is
     limited new Organs.Drive_Box.Organ with record
      Limit : Limits;
   end record;

   overriding function Fresh (Self : Organ; Session_Key : String)
     return Organs.Drive_Box.Reservoir;
   --  Full: nothing spent

   overriding function Snapshot_Of
     (Self : Organ; State : Organs.Drive_Box.Reservoir)
      return Organs.Drive_Box.Snapshot;

   overriding procedure Recharge
     (Self : Organ; State : in out Organs.Drive_Box.Reservoir);
   --  Forget the turns whose window has passed

   overriding procedure Spend
     (Self   : Organ;
      State  : in out Organs.Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count;
      Used   : Organs.Drive_Box.Turn_Use);
   --  Log the turn's calls and tokens at the clock's now (a turn that
   --  asked nothing logs nothing), and forget what the window has passed

end Organs.Budget_Box;
