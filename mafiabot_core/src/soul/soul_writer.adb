with Ada.IO_Exceptions;
with GNAT.OS_Lib;
with Body_Log;
with Text_Files;

package body Soul_Writer is

   Soul_Name   : constant String := "SOUL.md";
   Backup_Name : constant String := "SOUL.md.before-mafiabot";

   function Compose (Home, Name : String) return String
     renames Text_Files.Joined;

   procedure Write (Home : String; Document : String) is
      Soul : constant String := Compose (Home, Soul_Name);
      Pid  : constant String := Integer'Image
        (GNAT.OS_Lib.Pid_To_Integer (GNAT.OS_Lib.Current_Process_Id));
      --  Unique per process, so racing boots never share a temporary file
      Temporary : constant String :=
        Compose (Home, "." & Soul_Name & ".tmp." & Pid (Pid'First + 1 .. Pid'Last));
      Backup : constant String := Compose (Home, Backup_Name);
      Copied, Deleted, Renamed : Boolean;
   begin
      Text_Files.Make_Directories (Home);
      if Text_Files.Is_File (Soul) then
         --  Only a file of the document's size can hold the document: a
         --  larger one is never read onto the stack just to compare.
         if Text_Files.Size (Soul) = Document'Length
           and then Text_Files.Read (Soul) = Document
         then
            return;
         end if;
         if not Text_Files.Is_File (Backup) then
            --  The backup is made whole under another name, then linked
            --  to its own: of racing boots only the first to link makes
            --  it, and that one linked a copy taken before any boot
            --  replaced SOUL.md (a boot replaces it only once a backup
            --  stands).  Without a backup, SOUL.md is left as it is.
            GNAT.OS_Lib.Copy_File
              (Soul, Temporary, Copied, Mode => GNAT.OS_Lib.Overwrite,
               Preserve => GNAT.OS_Lib.None);
            if Copied then
               Text_Files.Link_New (Temporary, Backup);
            end if;
            GNAT.OS_Lib.Delete_File (Temporary, Deleted);
            if not Text_Files.Is_File (Backup) then
               Body_Log.Warning ("could not back up " & Soul
                                 & "; left as it was");
               return;
            end if;
         end if;
      end if;
      Text_Files.Write (Temporary, Document);
      GNAT.OS_Lib.Rename_File (Temporary, Soul, Renamed);
      if not Renamed then
         GNAT.OS_Lib.Delete_File (Temporary, Renamed);
         Body_Log.Warning ("could not replace " & Soul & "; left as it was");
      end if;
   exception
      when Ada.IO_Exceptions.Name_Error | Ada.IO_Exceptions.Use_Error
         | Ada.IO_Exceptions.Device_Error | Ada.IO_Exceptions.End_Error =>
         Body_Log.Warning ("could not write " & Soul
                           & " (the body serves without it)");
   end Write;

end Soul_Writer;
