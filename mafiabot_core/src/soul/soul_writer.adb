with Ada.Directories;
with Ada.Streams.Stream_IO;
with GNAT.OS_Lib;
with Body_Log;

package body Soul_Writer is

   use Ada.Directories;

   Soul_Name   : constant String := "SOUL.md";
   Backup_Name : constant String := "SOUL.md.before-mafiabot";

   function Content_Of (Path : String) return String is
      use Ada.Streams.Stream_IO;
      File : File_Type;
   begin
      Open (File, In_File, Path);
      declare
         Content : String (1 .. Natural (Size (File)));
      begin
         String'Read (Stream (File), Content);
         Close (File);
         return Content;
      end;
   end Content_Of;

   procedure Put_File (Path : String; Content : String) is
      use Ada.Streams.Stream_IO;
      File : File_Type;
   begin
      Create (File, Out_File, Path);
      String'Write (Stream (File), Content);
      Close (File);
   end Put_File;

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
         declare
            Existing : constant String := Content_Of (Soul);
         begin
            if Existing = Document then
               return;
            end if;
            if not Exists (Compose (Home, Backup_Name)) then
               Put_File (Compose (Home, Backup_Name), Existing);
            end if;
         end;
      end if;
      Put_File (Temporary, Document);
      GNAT.OS_Lib.Rename_File (Temporary, Soul, Renamed);
      if not Renamed then
         GNAT.OS_Lib.Delete_File (Temporary, Renamed);
         Body_Log.Warning ("could not replace " & Soul & "; left as it was");
      end if;
   exception
      when Ada.Directories.Name_Error | Ada.Directories.Use_Error
         | Ada.Streams.Stream_IO.Name_Error | Ada.Streams.Stream_IO.Use_Error
         | Ada.Streams.Stream_IO.Device_Error =>
         Body_Log.Warning ("could not write " & Soul
                           & " (the body serves without it)");
   end Write;

end Soul_Writer;
