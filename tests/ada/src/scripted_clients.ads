--  A client channel with a script in place of a process: what the body
--  sends is kept (Sent), and what it awaits comes from a queue of lines
--  (Script).  Each sampling/createMessage request the body sends is
--  answered at once by queueing a text result with its id, after the lines
--  Before_Answer holds for that request's rank (1 for the first): so a test
--  can send what a client would while a request waits, and a turn that
--  samples runs in-process.  An empty script times the wait out.  The
--  intent question (--intent model) is answered Intent_Answer instead.

with Ada.Containers.Indefinite_Vectors;
with Ada.Strings.Unbounded;
with Client_Channels;
with Monotonic;

package Scripted_Clients is

   package Line_Vectors is new Ada.Containers.Indefinite_Vectors
     (Positive, String);

   Answer_Text : constant String := "scripted thought";
   --  The text of every scripted sampling answer

   type Client is limited new Client_Channels.Channel with record
      Sent          : Line_Vectors.Vector;
      --  Every message the body sent, LF removed, in order
      Script        : Line_Vectors.Vector;
      --  The lines still to be read, first first
      Before_Answer : Line_Vectors.Vector;
      --  Sent before the answer to the first sampling request
      Asked         : Natural := 0;
      --  How many sampling requests the body sent
      Intent_Answer : Ada.Strings.Unbounded.Unbounded_String :=
        Ada.Strings.Unbounded.To_Unbounded_String ("chat");
      --  The text answering the intent question (plain: it is not escaped)
   end record;

   overriding procedure Send (Self : in out Client; Message : String);

   overriding procedure Await_Line
     (Self     : in out Client;
      Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Client_Channels.Wait_Outcome;
      Overflow : out Natural);

   type Client_Access is access all Client;

   function Count_Of (Self : Client; Part : String) return Natural;
   --  How many sent messages hold Part

   function First_Holding (Self : Client; Part : String) return Natural;
   --  The index in Sent of the first message holding Part, 0 for none

end Scripted_Clients;
