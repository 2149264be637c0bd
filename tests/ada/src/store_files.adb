with GNAT.OS_Lib;

package body Store_Files is

   procedure Remove (Path : String) is
      procedure Remove_File (Name : String) is
         Removed : Boolean;
      begin
         GNAT.OS_Lib.Delete_File (Name, Removed);
         pragma Unreferenced (Removed);
      end Remove_File;
   begin
      Remove_File (Path);
      Remove_File (Path & "-wal");
      Remove_File (Path & "-shm");
   end Remove;

end Store_Files;
