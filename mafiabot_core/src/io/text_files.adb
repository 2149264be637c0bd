with Ada.IO_Exceptions;
with Interfaces.C;
with GNAT.OS_Lib;

package body Text_Files is

   use GNAT.OS_Lib;

   function Is_File (Path : String) return Boolean renames Is_Regular_File;

   function Open (Path : String) return File_Descriptor is
      File : constant File_Descriptor := Open_Read (Path, Binary);
   begin
      if File = Invalid_FD then
         raise Ada.IO_Exceptions.Name_Error with Path & ": cannot be opened";
      end if;
      return File;
   end Open;

   function Size (Path : String) return Natural is
      File   : constant File_Descriptor := Open (Path);
      Length : constant Long_Integer := File_Length (File);
   begin
      Close (File);
      return Natural (Long_Integer'Min (Length, Long_Integer (Natural'Last)));
   end Size;

   function Read (Path : String) return String is
      File : constant File_Descriptor := Open (Path);
   begin
      declare
         Length  : constant Long_Integer := File_Length (File);
         Content : String (1 .. Natural (Long_Integer'Max (0, Length)));
         Got     : Natural := 0;
      begin
         --  A read may return less than asked: go on until the end
         while Got < Content'Length loop
            declare
               Part : constant Integer :=
                 GNAT.OS_Lib.Read (File, Content (Got + 1)'Address,
                                   Content'Length - Got);
            begin
               exit when Part <= 0;
               Got := Got + Part;
            end;
         end loop;
         Close (File);
         if Got /= Content'Length then
            raise Ada.IO_Exceptions.Device_Error with Path & ": short read";
         end if;
         return Content;
      end;
   end Read;

   procedure Write (Path : String; Content : String) is
      File  : constant File_Descriptor := Create_File (Path, Binary);
      Wrote : Integer;
   begin
      if File = Invalid_FD then
         raise Ada.IO_Exceptions.Use_Error with Path & ": cannot be created";
      end if;
      Wrote := GNAT.OS_Lib.Write (File, Content'Address, Content'Length);
      Close (File);
      if Wrote /= Content'Length then
         raise Ada.IO_Exceptions.Device_Error with Path & ": short write";
      end if;
   end Write;

   function Joined (Directory, Name : String) return String is
     (if Directory (Directory'Last) = '/' then Directory & Name
      else Directory & "/" & Name);

   function Parent_Of (Path : String) return String is
   begin
      for Slash in reverse Path'Range loop
         if Path (Slash) = '/' then
            return (if Slash = Path'First then "/"
                    else Path (Path'First .. Slash - 1));
         end if;
      end loop;
      return ".";
   end Parent_Of;

   function C_Link (Existing, New_Name : Interfaces.C.char_array)
     return Interfaces.C.int
   with Import, Convention => C, External_Name => "link";

   procedure Link_New (Existing, New_Name : String; Made : out Boolean) is
      use type Interfaces.C.int;
   begin
      Made := C_Link (Interfaces.C.To_C (Existing),
                      Interfaces.C.To_C (New_Name)) = 0;
   end Link_New;

   function C_Mkdir
     (Path : Interfaces.C.char_array; Mode : Interfaces.C.unsigned)
      return Interfaces.C.int
   with Import, Convention => C, External_Name => "mkdir";

   procedure Make_Directories (Path : String) is
      Any_Permission : constant := 8#777#;
      --  What the umask leaves, as mkdir -p
   begin
      for Last in Path'Range loop
         if (Last = Path'Last or else Path (Last + 1) = '/')
           and then Path (Last) /= '/'
           and then not Is_Directory (Path (Path'First .. Last))
         then
            if Interfaces.C."/="
                 (C_Mkdir (Interfaces.C.To_C (Path (Path'First .. Last)),
                           Any_Permission), 0)
              and then not Is_Directory (Path (Path'First .. Last))
            then
               raise Ada.IO_Exceptions.Use_Error with
                 Path (Path'First .. Last) & ": cannot be made";
            end if;
         end if;
      end loop;
   end Make_Directories;

end Text_Files;
