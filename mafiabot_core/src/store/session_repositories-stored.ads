--  The sessions in an SQLite file (--state FILE): Session_Store's two kinds
--  of turn, chosen by the turn's length.  A Short turn holds the store's
--  write lock through its work (Begin_Turn .. Commit_Turn); a Long one
--  reads its session, holds nothing while it waits on the client, and
--  commits only if no other body turned the session meanwhile
--  (Begin_Long_Turn .. Commit_Long_Turn).  A Discard, or a work that
--  raises, rolls back at once, so the lock is never held from the other
--  bodies until this one's next turn.

with Session_Store;
with Session_Table;

package Session_Repositories.Stored is

   type Repository is limited new Session_Repositories.Repository
   with private;

   procedure Open
     (Self            : in out Repository;
      Path            : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Full_Sync       : Boolean;
      Result          : out Session_Store.Outcome)
   with Pre => Path'Length > 0;
   --  Session_Store.Open: Result.Failed when the store cannot be used

   function Store_Of (Self : in out Repository)
     return not null access Session_Store.Store;
   --  The store itself, for what the boot keeps in it besides sessions

   overriding procedure Within_Turn
     (Self        : in out Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status);
   --  A failure of the store is logged on stderr and its Reason given

   overriding procedure Close (Self : in out Repository);
   --  The store is closed cleanly, so the next body reads no journal

   type Stored_Access is access all Repository;

private

   type Repository is limited new Session_Repositories.Repository with record
      Store : aliased Session_Store.Store;
   end record;

end Session_Repositories.Stored;
