with Ada.Directories;
with Ada.IO_Exceptions;
with GNAT.OS_Lib;
with Body_Log;
with Text_Files;

package body Soul_Writer is

   use Ada.Directories;

   Soul_Name   : constant String := "SOUL.md";
   Backup_Name : constant String := "SOUL.md.before-mafiabot";

   procedure Write (Home : String; Document : String) is
      Soul : constant String := Compose (Home, Soul_Name);
      Pid  : constant String := Integer'Image
        (GNAT.OS_Lib.Pid_To_Integer (GNAT.OS_Lib.Current_Process_Id));
      --  Unique per process, so racing boots never share a temporary file
      Temporary : constant String :=
        Compose (Home, "." & Soul_Name & ".tmp." & Pid (Pid'First + 1 .. Pid'Last));
      Renamed : Boolean;
   begin
      Create_Path (Home);
      if Exists (Soul) then
         --  Only a file of the document's size can hold the document: a
         --  larger one is never read onto the stack just to compare.
         if Size (Soul) = File_Size (Document'Length)
           and then Text_Files.Read (Soul) = Document
         then
            return;
         end if;
         if not Exists (Compose (Home, Backup_Name)) then
            --  Whole or absent, like SOUL.md itself; a racing boot may
            --  replace it with its own copy of the same file.
            Copy_File (Soul, Temporary);
            GNAT.OS_Lib.Rename_File
              (Temporary, Compose (Home, Backup_Name), Renamed);
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
