--  The stdio transport: newline-delimited messages in, one write(2) per
--  message out.  stdin is read in 64 KiB chunks, never with Text_IO.Get_Line
--  (it overflows the stack on multi-megabyte lines); a line is handed over as
--  a slice of a heap buffer, so no line is ever copied onto the stack.

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
