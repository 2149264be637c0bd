package body Turn_Thinkers is

   overriding procedure Start_Turn
     (Self        : in out Stub_Thinker;
      Reach       : Client_Reach;
      Call_Id     : String;
      State       : String;
      Responses   : String;
      Session_Key : String;
      Input       : String;
      Plan        : out Turn_Plan)
   is
      pragma Unreferenced (Reach, Call_Id, State, Responses, Session_Key,
                           Input);
   begin
      Plan := (Valid     => True,
               Problem   => <>,
               Port      => Self.Nowhere'Unchecked_Access,
               Length    => Session_Repositories.Short,
               Tentative => False);
   end Start_Turn;

end Turn_Thinkers;
