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

   procedure Serve_Lines
     (Max_Line_Bytes : Positive;
      On_Line        : not null Line_Handler;
      On_Overflow    : not null Overflow_Handler)
   is
      --  On the heap, not the stack: a frame this large is probed page by
      --  page on entry (-fstack-check), sixteen page faults at start-up,
      --  while read touches only the pages a message fills
      Chunk_Space : Heap_Text := new String (1 .. Chunk_Bytes);
      Chunk       : String renames Chunk_Space.all;

      --  The part of the current line seen in earlier chunks.  It grows by
      --  doubling and is reused from line to line.
      Pending      : Heap_Text := new String (1 .. Chunk_Bytes);
      Pending_Last : Natural := 0;
      Overflowed   : Boolean := False;
      Dropped      : Natural := 0;

      procedure Keep (Part : String) is
      begin
         if Overflowed or else Pending_Last + Part'Length > Max_Line_Bytes then
            if not Overflowed then
               Dropped := Pending_Last;
               Pending_Last := 0;
               Overflowed := True;
            end if;
            Dropped := Natural'Min (Dropped + Part'Length, Natural'Last / 2);
            return;
         end if;
         if Pending_Last + Part'Length > Pending'Length then
            declare
               Grown : constant Heap_Text := new String
                 (1 .. Natural'Min
                    (Natural'Max (2 * Pending'Length,
                                  Pending_Last + Part'Length),
                     Max_Line_Bytes));
            begin
               Grown (1 .. Pending_Last) := Pending (1 .. Pending_Last);
               Free (Pending);
               Pending := Grown;
            end;
         end if;
         Pending (Pending_Last + 1 .. Pending_Last + Part'Length) := Part;
         Pending_Last := Pending_Last + Part'Length;
      end Keep;

      procedure Dispatch (Line : String) is
         Last : Natural := Line'Last;
      begin
         if Last >= Line'First and then Line (Last) = ASCII.CR then
            Last := Last - 1;
         end if;
         On_Line (Line (Line'First .. Last));
      end Dispatch;

      --  End the current line: a line held whole in this chunk goes out as a
      --  slice of it, with no copy.
      procedure Finish (Tail : String) is
      begin
         if Overflowed then
            On_Overflow (Natural'Min (Dropped + Tail'Length, Natural'Last / 2));
            Overflowed := False;
            Dropped := 0;
         elsif Pending_Last = 0 then
            if Tail'Length > Max_Line_Bytes then
               On_Overflow (Tail'Length);
            else
               Dispatch (Tail);
            end if;
         else
            Keep (Tail);
            if Overflowed then
               On_Overflow (Dropped);
               Overflowed := False;
               Dropped := 0;
            else
               Dispatch (Pending (1 .. Pending_Last));
            end if;
         end if;
         Pending_Last := 0;
      end Finish;

   begin
      loop
         declare
            Got   : constant Integer :=
              GNAT.OS_Lib.Read (GNAT.OS_Lib.Standin, Chunk'Address,
                                Chunk'Length);
            Start : Positive := 1;
         begin
            exit when Got <= 0;
            loop
               declare
                  LF : constant Natural := LF_Index (Chunk (Start .. Got));
               begin
                  exit when LF = 0;
                  Finish (Chunk (Start .. LF - 1));
                  Start := LF + 1;
               end;
            end loop;
            if Start <= Got then
               Keep (Chunk (Start .. Got));
            end if;
         end;
      end loop;
      if Pending_Last > 0 or else Overflowed then
         Finish ("");
      end if;
      Free (Pending);
      Free (Chunk_Space);
   end Serve_Lines;

   procedure Send (Message : String) is
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
