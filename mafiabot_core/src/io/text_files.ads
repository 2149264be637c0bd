--  Whole small files in and out: the organ fixture (at most 1 MiB, checked
--  before reading) and SOUL.md.  Failures are Ada.IO_Exceptions, for the
--  caller to word.  Built on GNAT.OS_Lib rather than Ada.Directories and
--  Stream_IO, whose elaboration (calendar, regular expressions, character
--  maps) would cost every boot some page faults for a few stat calls.

package Text_Files is

   function Is_File (Path : String) return Boolean;
   --  Path names a regular file (not a directory)

   function Size (Path : String) return Natural;
   --  The file's length in bytes (Natural'Last for a larger one);
   --  Name_Error when it cannot be opened

   function Read (Path : String) return String;
   --  The file's bytes, as they are; Name_Error when it cannot be opened,
   --  Device_Error when it cannot be read whole

   procedure Write (Path : String; Content : String);
   --  Create or truncate Path and write Content; Use_Error when it cannot
   --  be created, Device_Error when it cannot be written whole

   function Joined (Directory, Name : String) return String
   with Pre => Directory'Length > 0;
   --  Name within Directory: Directory/Name

   function Parent_Of (Path : String) return String;
   --  Path without its last component ("." for a bare name, "/" for a name
   --  at the root)

   procedure Link_New (Existing, New_Name : String; Made : out Boolean);
   --  Give the file Existing the second name New_Name, unless New_Name is
   --  taken: of processes racing to make the same name, exactly one does
   --  (Made), and nothing that stands there is ever replaced (link(2)).

   procedure Make_Directories (Path : String);
   --  Path and every missing directory above it, as mkdir -p; Use_Error
   --  when one cannot be made

end Text_Files;
