with Ada.Unchecked_Deallocation;
with Interfaces.C;
with System;
with System.Storage_Elements;
with GNAT.OS_Lib;

package body Stdio_Channel is

   Chunk_Bytes : constant := 64 * 1024;

   Writing      : Boolean := False with Atomic;
   Term_Pending : Boolean := False with Atomic;

   procedure C_Exit (Status : Interfaces.C.int)
   with Import, Convention => C, External_Name => "_exit", No_Return;
   --  _exit, not exit: safe inside a signal handler

   type Heap_Text is access String;

   function C_Memchr
     (From : System.Address; Byte : Interfaces.C.int; Count : Interfaces.C.size_t)
      return System.Address
   with Import, Convention => C, External_Name => "memchr";

   --  The index of the first LF in Text, or 0: libc's memchr reads a word
   --  or a vector at a time, where a loop would test each byte of a line
   function LF_Index (Text : String) return Natural is
      use type System.Address;
      use type System.Storage_Elements.Storage_Offset;
      Found : System.Address;
   begin
      if Text'Length = 0 then
         return 0;
      end if;
      Found := C_Memchr (Text (Text'First)'Address, Character'Pos (ASCII.LF),
                         Interfaces.C.size_t (Text'Length));
      if Found = System.Null_Address then
         return 0;
      end if;
      return Text'First + Natural (Found - Text (Text'First)'Address);
   end LF_Index;

   procedure Free is new Ada.Unchecked_Deallocation (String, Heap_Text);

   --  Where lines are read from: stdin's bytes not yet split (Window), and
   --  the part of the current line seen before (Pending), which grows by
   --  doubling and is reused from line to line.  Two sources: Outer, which
   --  Serve_Lines reads, and Inner, which Await_Line reads while a line of
   --  Outer is being handled, so that line's bytes are never overwritten.
   type Source is record
      Own          : Heap_Text;
      --  The chunk read(2) fills: on the heap, not the stack (a frame this
      --  large is probed page by page on entry, -fstack-check)
      Window       : Heap_Text;
      First        : Positive := 1;
      Last         : Natural := 0;
      --  Window (First .. Last): read, not yet split into lines.  Window is
      --  Own, or the window Inner was lent by Outer
      Pending      : Heap_Text;
      Pending_Last : Natural := 0;
      Overflowed   : Boolean := False;
      Dropped      : Natural := 0;
      Ended        : Boolean := False;
      --  read(2) said end of file
   end record;

   Outer, Inner : Source;

   Line_Cap : Positive := Positive'Last;
   --  Serve_Lines's Max_Line_Bytes

   procedure Prepare (From : in out Source) is
   begin
      if From.Own = null then
         From.Own := new String (1 .. Chunk_Bytes);
         From.Pending := new String (1 .. Chunk_Bytes);
         From.Window := From.Own;
      end if;
   end Prepare;

   procedure Keep (From : in out Source; Part : String) is
   begin
      if From.Overflowed or else From.Pending_Last + Part'Length > Line_Cap
      then
         if not From.Overflowed then
            From.Dropped := From.Pending_Last;
            From.Pending_Last := 0;
            From.Overflowed := True;
         end if;
         From.Dropped :=
           Natural'Min (From.Dropped + Part'Length, Natural'Last / 2);
         return;
      end if;
      if From.Pending_Last + Part'Length > From.Pending'Length then
         declare
            Grown : constant Heap_Text := new String
              (1 .. Natural'Min
                 (Natural'Max (2 * From.Pending'Length,
                               From.Pending_Last + Part'Length),
                  Line_Cap));
         begin
            Grown (1 .. From.Pending_Last) :=
              From.Pending (1 .. From.Pending_Last);
            Free (From.Pending);
            From.Pending := Grown;
         end;
      end if;
      From.Pending (From.Pending_Last + 1 .. From.Pending_Last + Part'Length)
        := Part;
      From.Pending_Last := From.Pending_Last + Part'Length;
   end Keep;

   --  End the current line of From, whose last piece is Tail: a line held
   --  whole in the window goes out as a slice of it, with no copy.  Says
   --  which callback it made.
   procedure Finish
     (From        : in out Source;
      Tail        : String;
      On_Line     : not null access procedure (Line : String);
      On_Overflow : not null access procedure (Length : Natural);
      Outcome     : out Client_Channels.Wait_Outcome)
   is
      procedure Dispatch (Line : String) is
         Last : Natural := Line'Last;
      begin
         if Last >= Line'First and then Line (Last) = ASCII.CR then
            Last := Last - 1;
         end if;
         Outcome := Client_Channels.Got_Line;
         On_Line (Line (Line'First .. Last));
      end Dispatch;

      procedure Overflow (Length : Natural) is
      begin
         From.Overflowed := False;
         From.Dropped := 0;
         From.Pending_Last := 0;
         Outcome := Client_Channels.Got_Overflow;
         On_Overflow (Length);
      end Overflow;
   begin
      if From.Overflowed then
         Overflow (Natural'Min (From.Dropped + Tail'Length, Natural'Last / 2));
      elsif From.Pending_Last = 0 then
         if Tail'Length > Line_Cap then
            Overflow (Tail'Length);
         else
            Dispatch (Tail);
         end if;
      else
         Keep (From, Tail);
         if From.Overflowed then
            Overflow (From.Dropped);
         else
            --  Pending is From's until the line is handled: it is cleared
            --  only once the handler returns
            Dispatch (From.Pending (1 .. From.Pending_Last));
            From.Pending_Last := 0;
         end if;
      end if;
   end Finish;

   function C_Poll
     (Fds : System.Address; Count : Interfaces.C.unsigned_long;
      Timeout_Ms : Interfaces.C.int) return Interfaces.C.int
   with Import, Convention => C, External_Name => "poll";

   type Poll_Entry is record
      Fd      : Interfaces.C.int;
      Events  : Interfaces.C.short;
      Revents : Interfaces.C.short;
   end record
   with Convention => C;

   --  Whether stdin has something to read (or its end) by Deadline
   function Readable_By (Deadline : Monotonic.Instant) return Boolean is
      use type Monotonic.Instant;
      use type Interfaces.C.int;
      POLLIN : constant := 1;
      EINTR  : constant := 4;
   begin
      loop
         declare
            Left : constant Monotonic.Instant := Deadline - Monotonic.Now;
            --  Microseconds; poll counts milliseconds, rounded up so a wait
            --  never ends before its deadline, and at most an hour at a time
            Wait : constant Interfaces.C.int :=
              (if Left <= 0 then 0
               else Interfaces.C.int
                      (Monotonic.Instant'Min ((Left + 999) / 1000, 3_600_000)));
            Stdin : Poll_Entry := (Fd => 0, Events => POLLIN, Revents => 0);
            Ready : constant Interfaces.C.int :=
              C_Poll (Stdin'Address, 1, Wait);
         begin
            if Ready > 0 then
               return True;
            elsif Ready = 0 or else GNAT.OS_Lib.Errno /= EINTR then
               --  Nothing by the deadline; or poll itself failed, which a
               --  read would report as the end of input: let it
               return Ready < 0;
            end if;
         end;
      end loop;
   end Readable_By;

   --  The next line (or overflow, or final line without LF) of From, read
   --  by Deadline if Bounded, else whenever it comes
   procedure Take_Line
     (From        : in out Source;
      Bounded     : Boolean;
      Deadline    : Monotonic.Instant;
      On_Line     : not null access procedure (Line : String);
      On_Overflow : not null access procedure (Length : Natural);
      Outcome     : out Client_Channels.Wait_Outcome) is
   begin
      loop
         if From.First <= From.Last then
            declare
               Line_First : constant Positive := From.First;
               LF : constant Natural :=
                 LF_Index (From.Window (From.First .. From.Last));
            begin
               if LF /= 0 then
                  --  Consumed before the handler runs: a handler that reads
                  --  on starts after this line
                  From.First := LF + 1;
                  Finish (From, From.Window (Line_First .. LF - 1), On_Line,
                          On_Overflow, Outcome);
                  return;
               end if;
               Keep (From, From.Window (From.First .. From.Last));
               From.First := From.Last + 1;
            end;
         end if;
         if From.Ended then
            if From.Pending_Last > 0 or else From.Overflowed then
               Finish (From, "", On_Line, On_Overflow, Outcome);
            else
               Outcome := Client_Channels.Input_Closed;
            end if;
            return;
         end if;
         if Bounded and then not Readable_By (Deadline) then
            Outcome := Client_Channels.Timed_Out;
            return;
         end if;
         declare
            Got : constant Integer :=
              GNAT.OS_Lib.Read (GNAT.OS_Lib.Standin, From.Own.all'Address,
                                From.Own'Length);
         begin
            if Got <= 0 then
               From.Ended := True;
            else
               From.Window := From.Own;
               From.First := 1;
               From.Last := Got;
            end if;
         end;
      end loop;
   end Take_Line;

   overriding procedure Await_Line
     (Self     : in out Client;
      Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Client_Channels.Wait_Outcome;
      Overflow : out Natural)
   is
      pragma Unreferenced (Self);

      procedure Record_Overflow (Length : Natural) is
      begin
         Overflow := Length;
      end Record_Overflow;
   begin
      Overflow := 0;
      Prepare (Inner);
      --  What Outer read past the line being handled comes first; Outer
      --  reads nothing until its handler returns, so its window is lent
      if Inner.First > Inner.Last and then Outer.First <= Outer.Last then
         Inner.Window := Outer.Window;
         Inner.First := Outer.First;
         Inner.Last := Outer.Last;
         Outer.First := Outer.Last + 1;
      end if;
      Inner.Ended := Inner.Ended or else Outer.Ended;
      Take_Line (Inner, True, Deadline, On_Line, Record_Overflow'Access,
                 Outcome);
   end Await_Line;

   --  After a handler returns: what Inner read and did not hand over is
   --  Outer's to go on with, in order (a partial line, then the window)
   procedure Reclaim is
   begin
      if Inner.Own = null then
         return;
      end if;
      Outer.Ended := Outer.Ended or else Inner.Ended;
      Inner.Ended := False;
      if Inner.Overflowed then
         Outer.Overflowed := True;
         Outer.Dropped := Inner.Dropped;
         Inner.Overflowed := False;
         Inner.Dropped := 0;
      elsif Inner.Pending_Last > 0 then
         Keep (Outer, Inner.Pending (1 .. Inner.Pending_Last));
      end if;
      Inner.Pending_Last := 0;
      if Inner.First <= Inner.Last then
         if Inner.Window = Outer.Own then
            Outer.First := Inner.First;
            Outer.Last := Inner.Last;
         else
            Outer.Own (1 .. Inner.Last - Inner.First + 1) :=
              Inner.Window (Inner.First .. Inner.Last);
            Outer.First := 1;
            Outer.Last := Inner.Last - Inner.First + 1;
         end if;
         Outer.Window := Outer.Own;
         Inner.First := Inner.Last + 1;
      end if;
      Inner.Window := Inner.Own;
   end Reclaim;

   procedure Serve_Lines
     (Max_Line_Bytes : Positive;
      On_Line        : not null Line_Handler;
      On_Overflow    : not null Overflow_Handler)
   is
      Outcome : Client_Channels.Wait_Outcome;
      Never   : constant Monotonic.Instant := Monotonic.Never;
      use type Client_Channels.Wait_Outcome;
   begin
      Line_Cap := Max_Line_Bytes;
      Prepare (Outer);
      loop
         Reclaim;
         Take_Line (Outer, False, Never, On_Line, On_Overflow, Outcome);
         exit when Outcome = Client_Channels.Input_Closed;
      end loop;
   end Serve_Lines;

   overriding procedure Send (Self : in out Client; Message : String) is
      pragma Unreferenced (Self);
      EINTR : constant := 4;
      Done  : Natural := 0;
   begin
      Writing := True;
      while Done < Message'Length loop
         declare
            Wrote : constant Integer :=
              GNAT.OS_Lib.Write (GNAT.OS_Lib.Standout,
                                 Message (Message'First + Done)'Address,
                                 Message'Length - Done);
         begin
            --  A SIGTERM interrupts a write blocked on a client that stopped
            --  reading (the handler is installed without SA_RESTART): the
            --  client is going away, so leave now rather than wait on it.
            if Term_Pending then
               C_Exit (0);
            elsif Wrote > 0 then
               Done := Done + Wrote;
            elsif Wrote < 0 and then GNAT.OS_Lib.Errno = EINTR then
               null;
            else
               --  stdout is closed: nobody is left to answer
               C_Exit (0);
            end if;
         end;
      end loop;
      Writing := False;
      if Term_Pending then
         C_Exit (0);
      end if;
   end Send;

   function C_Signal
     (Signal : Interfaces.C.int; Handler : System.Address)
      return System.Address
   with Import, Convention => C, External_Name => "signal";

   function C_Siginterrupt
     (Signal : Interfaces.C.int; Interrupt : Interfaces.C.int)
      return Interfaces.C.int
   with Import, Convention => C, External_Name => "siginterrupt";
   --  Clears SA_RESTART for Signal, so a blocked write returns EINTR

   SIGPIPE : constant Interfaces.C.int := 13;
   SIGTERM : constant Interfaces.C.int := 15;

   procedure On_Term (Signal : Interfaces.C.int) with Convention => C;

   procedure On_Term (Signal : Interfaces.C.int) is
      pragma Unreferenced (Signal);
   begin
      if Writing then
         Term_Pending := True;
      else
         C_Exit (0);
      end if;
   end On_Term;

   procedure Install_Signal_Handlers is
      Ignore   : constant System.Address := System'To_Address (1);
      Old_Pipe_Action : constant System.Address := C_Signal (SIGPIPE, Ignore);
      Old_Term_Action : constant System.Address :=
        C_Signal (SIGTERM, On_Term'Address);
      Interrupting    : constant Interfaces.C.int := C_Siginterrupt (SIGTERM, 1);
      pragma Unreferenced (Old_Pipe_Action, Old_Term_Action, Interrupting);
   begin
      null;
   end Install_Signal_Handlers;

end Stdio_Channel;
