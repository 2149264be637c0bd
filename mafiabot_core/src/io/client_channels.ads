--  The client's channel: the one way anything reaches the client, and the
--  one way its lines are read while the body waits on it.  Chosen at boot
--  (Stdio_Channel.Client over the process's stdin and stdout) and given to
--  every unit that talks to the client (the protocol and its model port),
--  so that no unit but the channel's implementation writes stdout, and a
--  test can stand a scripted client in its place.

with Monotonic;

package Client_Channels is

   type Wait_Outcome is
     (Got_Line,
      --  On_Line was called with the next line
      Got_Overflow,
      --  The next line was longer than the cap: drained, never handed over
      Timed_Out,
      --  No whole line by the deadline (what came of one is kept)
      Input_Closed);
      --  The client's input is at its end: no line will come

   type Channel is limited interface;

   procedure Send (Self : in out Channel; Message : String) is abstract;
   --  Write Message (one whole message, LF included) to the client, in one
   --  piece, after every message sent before it

   procedure Await_Line
     (Self     : in out Channel;
      Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Wait_Outcome;
      Overflow : out Natural) is abstract;
   --  The client's next line (LF removed), read by Deadline at the latest
   --  and given to On_Line, which must not read the channel again; at most
   --  one call of On_Line.  Overflow is the length of a line past the cap
   --  (Got_Overflow), else 0.

   type Channel_Access is access all Channel'Class;

end Client_Channels;
