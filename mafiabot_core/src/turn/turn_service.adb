with Organs.Morag;
with Session_Keys;
with Session_Table;

package body Turn_Service is

   use Ada.Strings.Unbounded;
   use type Turn_Thinkers.Round_End;

   procedure Configure
     (Self     : in out Service;
      Chosen   : Organs.Sets.Organ_Set;
      Curve    : Energy_Gate.Threshold_Curve;
      Sessions : not null Session_Repositories.Repository_Access;
      Thinker  : not null Turn_Thinkers.Thinker_Access) is
   begin
      Self.Chosen := Chosen;
      Self.Curve := Curve;
      Self.Sessions := Sessions;
      Self.Thinker := Thinker;
   end Configure;

   procedure Take_Turn
     (Self                 : in out Service;
      Reach                : Turn_Thinkers.Client_Reach;
      Call_Id              : String;
      State, Responses     : String;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Cycle.Turn_Trace;
      Result               : out Outcome)
   is
      Key    : constant String := Session_Keys.Key_Of (Uid, Channel, Server);
      Plan   : Turn_Thinkers.Turn_Plan;
      Stored : Session_Repositories.Status;

      procedure Work
        (Session : in out Session_Table.Session;
         Memory  : in out Organs.Morag.Memory'Class;
         Said    : out Session_Repositories.Verdict) is
      begin
         Said := Session_Repositories.Keep;
         if Plan.Tentative then
            --  The memory is only read until the round is kept
            declare
               Scratch : Session_Table.Session := Session;
            begin
               Turn_Cycle.Run (Self.Chosen, Self.Curve, Scratch, Memory, Uid,
                               Channel, Server, Input, Plan.Port.all, Trace,
                               Remembering => False);
               if Self.Thinker.Ending = Turn_Thinkers.Asked_Client then
                  --  A round that asks the client for more changed nothing:
                  --  nothing to write (nor to sync, nor a fresh session to
                  --  make room for)
                  Said := Session_Repositories.Discard;
               else
                  Session := Scratch;
                  Turn_Cycle.Remember (Self.Chosen, Memory, Trace.Turn, Input);
               end if;
            end;
         else
            Turn_Cycle.Run (Self.Chosen, Self.Curve, Session, Memory, Uid,
                            Channel, Server, Input, Plan.Port.all, Trace);
         end if;
      end Work;
   begin
      Result := (Ended => Answered, Reason => Null_Unbounded_String);
      Self.Thinker.Start_Turn
        (Reach, Call_Id, State, Responses, Key, Input, Plan);
      if not Plan.Valid then
         Result := (Ended => Refused, Reason => Plan.Problem);
         return;
      end if;
      Self.Sessions.Within_Turn
        (Self.Chosen, Key, Plan.Length, Work'Access, Stored);
      --  A cancelled call gets no answer, not even the store's error
      if Stored.Failed and then Self.Thinker.Ending /= Turn_Thinkers.Call_Cancelled
      then
         Result := (Ended => Store_Failed, Reason => Stored.Reason);
      else
         case Self.Thinker.Ending is
            when Turn_Thinkers.Thought        => Result.Ended := Answered;
            when Turn_Thinkers.Asked_Client   => Result.Ended := Needs_Input;
            when Turn_Thinkers.Call_Cancelled => Result.Ended := Cancelled;
         end case;
      end if;
   end Take_Turn;

   function Pending_Requests (Self : Service) return String is
     (Self.Thinker.Pending_Requests);

   function Pending_State (Self : Service) return String is
     (Self.Thinker.Pending_State);

   procedure Close (Self : in out Service) is
   begin
      if Self.Sessions /= null then
         Self.Sessions.Close;
      end if;
   end Close;

end Turn_Service;
