with Ada.Streams.Stream_IO;

package body Text_Files is

   use Ada.Streams.Stream_IO;

   function Read (Path : String) return String is
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
   end Read;

   procedure Write (Path : String; Content : String) is
      File : File_Type;
   begin
      Create (File, Out_File, Path);
      String'Write (Stream (File), Content);
      Close (File);
   end Write;

end Text_Files;
