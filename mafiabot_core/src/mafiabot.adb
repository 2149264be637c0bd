--  mafiabot: the body Hermes mounts as an MCP stdio server.
--
--  Boot: read the command line and the organ fixture, fix the Big-3
--  identity and write SOUL.md (B2); then serve stdin line by line until it
--  closes.  A configuration that cannot work exits 2 before serving.

with Ada.Exceptions;
with Ada.Strings.Unbounded;
with Ada.Text_IO;
with GNAT.OS_Lib;
with Body_Config;
with Body_Log;
with Hermes_Protocol;
with Organs;
with Organs.Fixtures;
with Organs.Identity;
with Soul_Writer;
with Stdio_Channel;

procedure Mafiabot is

   use Ada.Strings.Unbounded;

   Usage_Status : constant := 2;

   Protocol : Hermes_Protocol.Server;

   procedure On_Line (Line : String);
   --  Answer one line on stdout, if it calls for an answer

   procedure On_Overflow (Length : Natural);
   --  Refuse a line longer than --max-line-bytes

   procedure On_Line (Line : String) is
   begin
      Protocol.Handle (Line, Stdio_Channel.Send'Access);
   exception
      --  The request loop's edge: a defect met while serving one line stays
      --  with that line, which is answered -32603, and the body reads on.
      when E : others =>
         Body_Log.Error ("internal error: "
                         & Ada.Exceptions.Exception_Information (E));
         Protocol.Answer_Internal_Error (Line, Stdio_Channel.Send'Access);
   end On_Line;

   procedure On_Overflow (Length : Natural) is
   begin
      Protocol.Refuse_Oversized (Length, Stdio_Channel.Send'Access);
   end On_Overflow;

   Settings : Body_Config.Settings;
   Stub     : Organs.Fixture;

begin
   Stdio_Channel.Install_Signal_Handlers;

   begin
      Settings := Body_Config.From_Command_Line;
      if Settings.Show_Help then
         Ada.Text_IO.Put (Body_Config.Usage);
         return;
      elsif Settings.Show_Version then
         Ada.Text_IO.Put_Line ("mafiabot " & Body_Config.Version);
         return;
      end if;
      Stub := Organs.Fixtures.Load
        (if Length (Settings.Organs_Path) > 0
         then To_String (Settings.Organs_Path)
         else Body_Config.Default_Organs_Path);
      if Length (Settings.Thresholds) > 0 then
         Stub.Curve := Organs.Fixtures.Parse_Curve
           (To_String (Settings.Thresholds));
      end if;
   exception
      when E : Body_Config.Usage_Error | Organs.Fixture_Error =>
         Body_Log.Error (Ada.Exceptions.Exception_Message (E));
         Ada.Text_IO.Put (Ada.Text_IO.Standard_Error, Body_Config.Usage);
         GNAT.OS_Lib.OS_Exit (Usage_Status);
   end;

   declare
      Identity : constant Organs.Identity.Big_Three :=
        Organs.Identity.Draw (Stub);
      Home     : constant String := Body_Config.Resolved_Hermes_Home (Settings);
   begin
      if Settings.Write_Soul then
         if Home = "" then
            Body_Log.Warning ("no HERMES_HOME or HOME: SOUL.md not written");
         else
            Soul_Writer.Write (Home, Organs.Identity.Soul_Document (Stub, Identity));
         end if;
      end if;
      Protocol.Configure (Settings, Stub, Identity);
   end;

   Stdio_Channel.Serve_Lines
     (Max_Line_Bytes => Settings.Max_Line_Bytes,
      On_Line        => On_Line'Unrestricted_Access,
      On_Overflow    => On_Overflow'Unrestricted_Access);

   --  End of input: leave at once.  Finalizing a large session table would
   --  only delay the exit the client is waiting for.
   GNAT.OS_Lib.OS_Exit (0);
end Mafiabot;
