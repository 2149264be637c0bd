--  Whole small files in and out: the organ fixture (at most 1 MiB, checked
--  before reading) and SOUL.md.  Failures are Ada.IO_Exceptions, for the
--  caller to word.

package Text_Files is

   function Read (Path : String) return String;
   --  The file's bytes, as they are

   procedure Write (Path : String; Content : String);
   --  Create or truncate Path and write Content

end Text_Files;
