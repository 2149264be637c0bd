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
      Session : Session_Table.Session_Access;
      Memory  : Session_Table.Memory_Access;
      Said    : Verdict;
   begin
      Result := (Failed => False, Reason => <>);
      Self.Table.Open (Chosen, Session_Key, Session, Memory);
      Work (Session.all, Memory.all, Said);
      pragma Unreferenced (Said);
   end Within_Turn;

end Session_Repositories.Memory;
