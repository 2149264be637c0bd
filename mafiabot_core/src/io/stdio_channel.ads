--  The stdio transport: newline-delimited messages in, one write(2) per
--  message out.  stdin is read in 64 KiB chunks, never with Text_IO.Get_Line
--  (it overflows the stack on multi-megabyte lines); a line is handed over as
--  a slice of a heap buffer, so no line is ever copied onto the stack.
--
--  While a line is being handled, the handler may read the lines after it
--  through the Client (Await_Line: the body waits for the answer to a
--  request of its own), each wait bounded by a deadline (poll(2) on stdin).
--  The line being handled stays where it is while later lines are read:
--  those go into buffers of their own.  Every message the body writes goes
--  out through the Client: this package alone writes stdout.

with Client_Channels;
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

   type Client is limited new Client_Channels.Channel with null record;
   --  The process's own client: stdout for what the body sends, stdin for
   --  what it awaits

   overriding procedure Send (Self : in out Client; Message : String);
   --  One write(2) of Message.  A closed stdout ends the process with
   --  status 0: nobody is left to answer.

   overriding procedure Await_Line
     (Self     : in out Client;
      Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Client_Channels.Wait_Outcome;
      Overflow : out Natural);
   --  Only from within a handler of Serve_Lines: the next line after the
   --  one being handled (or after the last one awaited).  What is read past
   --  that line is kept for Serve_Lines, which goes on from there.

   procedure Install_Signal_Handlers;
   --  SIGPIPE is ignored (a closed stdout shows up as a failed write), and
   --  SIGTERM exits with status 0: at once between messages, right after
   --  the message being written, or, when the client has stopped reading
   --  and the write is blocked, as soon as the signal interrupts it

end Stdio_Channel;
