--  Where the sessions of law L1 are kept, behind one interface: in the
--  body's memory (Session_Repositories.Memory), in an SQLite file shared
--  by several bodies (Session_Repositories.Stored, --state FILE) or in a
--  PostgreSQL database shared by bodies on several machines
--  (Session_Repositories.Postgres, --state postgresql://..., the dynamic
--  body only).  Chosen once at boot and given to the turn service, which
--  never knows which it has.
--
--  Contract any repository honours:
--  - a turn is one call of Within_Turn, which gives the turn's work the
--    session of its key (fresh, as the chosen organs make it, when new)
--    and the session's MoRAG memory (Organs.Morag.Memory, in whatever
--    representation the repository keeps it: no other session's is ever
--    lent), and keeps what the work leaves of both before it returns: a caller writes the
--    turn's reply only after that, so a reply a client has seen is never
--    undone by a crash of the body;
--  - the transaction is the repository's: a Short turn may hold a write
--    lock through its work (microseconds), a Long one (it waits on the
--    client's model, up to its deadline) holds none while the work runs,
--    and fails at the end if another body turned the session meanwhile;
--  - a work that raises leaves nothing of its turn kept and no lock held
--    (the exception goes on to the request loop's edge);
--  - a failure is a Status naming what failed, never an exception.

with Ada.Strings.Unbounded;
with Organs.Morag;
with Organs.Sets;
with Session_Table;

package Session_Repositories is

   type Turn_Length is
     (Short,
      --  The turn runs in the body's own time (the stub's: microseconds)
      Long);
      --  The turn waits on the client's model, up to the turn's deadline

   type Verdict is
     (Keep,
      --  The turn happened: keep the session its work left
      Discard);
      --  Nothing of the turn happened (the work left the session as it
      --  found it): keep nothing, release what the turn holds

   type Status is record
      Failed : Boolean := False;
      Reason : Ada.Strings.Unbounded.Unbounded_String;
      --  When Failed: what failed, on one line
   end record;

   type Repository is limited interface;

   procedure Within_Turn
     (Self        : in out Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status) is abstract
   with Pre'Class => Organs.Sets.Is_Complete (Chosen);
   --  Run Work on the session of Session_Key and its memory, and keep what
   --  it leaves of them when it says Keep.  Result.Failed: the turn did not happen (Work was not
   --  called, or what it made is not kept).

   procedure Close (Self : in out Repository) is abstract;
   --  At the end of input: leave the sessions where the next body finds
   --  them

   type Repository_Access is access all Repository'Class;

end Session_Repositories;
