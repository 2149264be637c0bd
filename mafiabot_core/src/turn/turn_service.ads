--  The turn service: what one `turn` call comes to, between the protocol
--  (which reads the call and spells its outcome) and the cycle (which runs
--  the 23 steps).  It owns the two effects a turn has, both chosen at boot
--  and injected: where the sessions are kept (a Session_Repositories
--  repository, whose transactions and their policy are its own) and who
--  thinks (a Turn_Thinkers thinker, which gives each turn its model port
--  and says how long the turn may wait on it).
--
--  A turn, in order: the thinker plans it from the call (a plan it refuses
--  touches no session); the repository opens the session of the call's
--  key, as short or long as the plan says; the cycle runs on it (on a copy
--  for a tentative round, kept only once the round needs no more input);
--  the repository keeps it; the outcome says what the protocol answers.
--  The service writes nothing to the client: every message of a turn goes
--  through the channel its port was given.

with Ada.Strings.Unbounded;
with Energy_Gate;
with Organs.Sets;
with Session_Repositories;
with Turn_Cycle;
with Turn_Thinkers;

package Turn_Service is

   type Service is tagged limited private;

   procedure Configure
     (Self     : in out Service;
      Chosen   : Organs.Sets.Organ_Set;
      Curve    : Energy_Gate.Threshold_Curve;
      Sessions : not null Session_Repositories.Repository_Access;
      Thinker  : not null Turn_Thinkers.Thinker_Access)
   with Pre  => Organs.Sets.Is_Complete (Chosen)
                and then Energy_Gate.Is_Valid (Curve),
        Post => Is_Configured (Self);

   function Is_Configured (Self : Service) return Boolean;

   type Turn_End is
     (Answered,
      --  The trace is the turn's answer
      Refused,
      --  The call cannot be thought (Reason says why): nothing happened
      Needs_Input,
      --  A round that asked the client (Pending_Requests, Pending_State)
      Cancelled,
      --  The client cancelled the call: it gets no answer
      Store_Failed);
      --  The repository could not read or keep the session (Reason): the
      --  turn did not happen

   type Outcome is record
      Ended  : Turn_End := Answered;
      Reason : Ada.Strings.Unbounded.Unbounded_String;
   end record;

   procedure Take_Turn
     (Self                 : in out Service;
      Reach                : Turn_Thinkers.Client_Reach;
      Call_Id              : String;
      State, Responses     : String;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Cycle.Turn_Trace;
      Result               : out Outcome)
   with Pre => Is_Configured (Self);
   --  One turn of the session (Uid, Channel, Server) saying Input, for the
   --  call Call_Id (as sent; State and Responses as Turn_Thinkers.Start_Turn
   --  takes them).  Trace is the turn's when Result.Ended is Answered or
   --  Needs_Input.

   function Pending_Requests (Self : Service) return String;
   function Pending_State (Self : Service) return String;
   --  After a turn that Needs_Input: what the client is asked, and the
   --  state it echoes with its answers

   procedure Close (Self : in out Service);
   --  At the end of input: the repository leaves its sessions for the next
   --  body

   type Service_Access is access all Service;

private

   type Service is tagged limited record
      Chosen   : Organs.Sets.Organ_Set;
      Curve    : Energy_Gate.Threshold_Curve := [others => 0];
      Sessions : Session_Repositories.Repository_Access;
      Thinker  : Turn_Thinkers.Thinker_Access;
   end record;

   use type Session_Repositories.Repository_Access;
   use type Turn_Thinkers.Thinker_Access;

   function Is_Configured (Self : Service) return Boolean is
     (Self.Sessions /= null and then Self.Thinker /= null);

end Turn_Service;
