with Ada.Text_IO;

package body Body_Log is

   procedure Put (Level, Message : String) is
   begin
      Ada.Text_IO.Put_Line
        (Ada.Text_IO.Standard_Error, "mafiabot: " & Level & Message);
   end Put;

   procedure Info (Message : String) is
   begin
      Put ("", Message);
   end Info;

   procedure Warning (Message : String) is
   begin
      Put ("warning: ", Message);
   end Warning;

   procedure Error (Message : String) is
   begin
      Put ("error: ", Message);
   end Error;

end Body_Log;
