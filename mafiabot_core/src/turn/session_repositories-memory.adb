with Organs.Morag.Excerpts;

package body Session_Repositories.Memory is

   procedure Set_Capacity (Self : in out Repository; Capacity : Positive) is
   begin
      Self.Table.Set_Capacity (Capacity);
   end Set_Capacity;

   overriding procedure Within_Turn
     (Self        : in out Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status)
   is
      pragma Unreferenced (Length);
      Kept        : Session_Table.Session_Access;
      Kept_Memory : Session_Table.Memory_Access;
   begin
      Result := (Failed => False, Reason => <>);
      Self.Table.Look_Up (Session_Key, Kept, Kept_Memory);
      declare
         use type Session_Table.Session_Access;
         --  The work runs on copies, kept only when it says so: a work
         --  that raises or discards leaves the table as it was, a new
         --  session unmade and no other evicted for it
         Session : Session_Table.Session :=
           (if Kept = null then Session_Table.Fresh (Chosen, Session_Key)
            else Kept.all);
         Memory  : Organs.Morag.Excerpts.Excerpt_Memory :=
           (if Kept = null then Organs.Morag.Excerpts.Empty
            else Kept_Memory.all);
         Said    : Verdict;
      begin
         Work (Session, Memory, Said);
         if Said = Keep then
            Self.Table.Open (Chosen, Session_Key, Kept, Kept_Memory);
            Kept.all := Session;
            Kept_Memory.all := Memory;
         end if;
      end;
   end Within_Turn;

end Session_Repositories.Memory;
