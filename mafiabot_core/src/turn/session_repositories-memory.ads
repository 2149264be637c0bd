--  The sessions in the body's memory (the default): the bounded table of
--  Session_Table.  Each turn works on a copy of its session and memory
--  (fresh ones for a new key), written back, the session made if new, only
--  when the work says Keep: as a store's transaction, a work that raises or
--  discards leaves nothing of its turn.

with Session_Table;

package Session_Repositories.Memory is

   type Repository is limited new Session_Repositories.Repository
   with private;

   procedure Set_Capacity (Self : in out Repository; Capacity : Positive);
   --  The most sessions kept at once; past it the least recently used is
   --  evicted

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
   --  Never fails

   overriding procedure Close (Self : in out Repository) is null;
   --  Memory is left as it is: finalizing a large table would only delay
   --  the exit the client waits for

   type Memory_Access is access all Repository;

private

   type Repository is limited new Session_Repositories.Repository with record
      Table : Session_Table.Table;
   end record;

end Session_Repositories.Memory;
