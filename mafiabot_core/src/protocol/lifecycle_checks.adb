package body Lifecycle_Checks
  with SPARK_Mode => On
is

   function Check
     (Initialized : Boolean; Request : Request_Facts) return Verdict
   is
      Is_Modern : constant Boolean := Request.Version /= Unstated;
   begin
      case Request.Version is
         when Other =>
            return (Unsupported_Version, Is_Modern);
         when Modern =>
            if not Request.Capabilities_Given then
               return (Missing_Capabilities, Is_Modern);
            end if;
         when Unstated =>
            null;
      end case;
      if Request.Method = Initialize and then Initialized then
         return (Already_Initialized, Is_Modern);
      elsif not Is_Modern
        and then not Initialized
        and then Request.Method not in Before_Initialize
      then
         return (Not_Initialized, Is_Modern);
      end if;
      return (Allowed, Is_Modern);
   end Check;

end Lifecycle_Checks;
