--  The stdio transport: newline-delimited messages in, one write(2) per
--  message out.  stdin is read in 64 KiB chunks, never with Text_IO.Get_Line
--  (it overflows the stack on multi-megabyte lines); a line is handed over as
--  a slice of a heap buffer, so no line is ever copied onto the stack.
--
--  While a line is being handled, the handler may read the lines after it
--  (Await_Line: the body waits for the answer to a request of its own),
--  each wait bounded by a deadline (poll(2) on stdin), and may set lines
--  aside (Defer) to be handled once it returns, in the order they came.
--  The line being handled stays where it is while later lines are read:
--  those go into buffers of their own.

with Monotonic;

package Stdio_Channel is

   type Line_Handler is access procedure (Line : String);
   --  Called with each complete line, LF (and a trailing CR) removed

   type Overflow_Handler is access procedure (Length : Natural);
   --  Called once per line longer than the cap, after it has been drained;
   --  Length is how many bytes it had

   procedure Serve_Lines
     (Max_Line_Bytes : Positive;
      On_Line        : not null Line_Handler;
      On_Overflow    : not null Overflow_Handler);
   --  Read stdin until end of file, dispatching lines as they complete.  A
   --  final line without LF is dispatched too.

   type Wait_Outcome is
     (Got_Line,
      --  On_Line was called with the next line
      Got_Overflow,
      --  On_Overflow was called for a line longer than the cap
      Timed_Out,
      --  No whole line by the deadline (what came of one is kept)
      Input_Closed);
      --  stdin is at its end: no line will come

   procedure Await_Line
     (Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Wait_Outcome);
   --  Only from within a handler of Serve_Lines: the next line after the
   --  one being handled (or after the last one awaited), read by Deadline
   --  at the latest, given to On_Line; a line past the cap goes to
   --  Serve_Lines's On_Overflow, as any other would.  At most one callback.
   --  What is read past that line is kept for Serve_Lines, which goes on
   --  from there.

   Max_Deferred_Lines : constant := 64;
   Max_Deferred_Bytes : constant := 16 * 1024 * 1024;
   --  What may be set aside while one request is handled: a client sends
   --  a few requests while it waits, not thousands

   function Defer (Line : String) return Boolean;
   --  Keep a copy of Line for Serve_Lines to handle, before any line it
   --  reads, once the handler running now returns; False, keeping nothing,
   --  when the bounds above are reached

   procedure Send (Message : String);
   --  Write Message (a whole line, LF included) to stdout as one write(2).
   --  A closed stdout ends the process with status 0: nobody is left to
   --  answer.

   procedure Install_Signal_Handlers;
   --  SIGPIPE is ignored (a closed stdout shows up as a failed write), and
   --  SIGTERM exits with status 0: at once between messages, right after
   --  the message being written, or, when the client has stopped reading
   --  and the write is blocked, as soon as the signal interrupts it

end Stdio_Channel;
