with Ada.IO_Exceptions;
with GNAT.OS_Lib;
with Body_Log;
with Soul_Marks;
with Text_Files;

package body Soul_Writer is

   use Ada.Strings.Unbounded;
   use Body_Config;
   use Soul_Marks;

   HT : constant Character := ASCII.HT;

   Max_Generations : constant := 1_000;
   --  Backups in one second before a boot gives up replacing: far more
   --  than racing boots make, few enough to end at once on a full folder

   Replace_Advice : constant String :=
     "to use the body's, keeping this one as a backup, run the body with"
     & " --soul replace (mafiabot-harness mount --soul replace)";

   function Digits_Of (Number, Width : Natural) return String is
      Image : constant String := Natural'Image (Number);
      Bare  : constant String := Image (Image'First + 1 .. Image'Last);
   begin
      return [1 .. Width - Natural'Min (Width, Bare'Length) => '0'] & Bare;
   end Digits_Of;

   function Temporary (Home, Purpose : String) return String is
     (Text_Files.Joined
        (Home, "." & Soul_Name & "." & Purpose & "."
         & Digits_Of (GNAT.OS_Lib.Pid_To_Integer
                        (GNAT.OS_Lib.Current_Process_Id), 1)));
   --  Unique per process, so racing boots never share a temporary file

   function Backup_Stem return String is
      use GNAT.OS_Lib;
      Year   : Year_Type;
      Month  : Month_Type;
      Day    : Day_Type;
      Hour   : Hour_Type;
      Minute : Minute_Type;
      Second : Second_Type;
   begin
      GM_Split (Current_Time, Year, Month, Day, Hour, Minute, Second);
      return Backup_Prefix & "." & Digits_Of (Year, 4) & Digits_Of (Month, 2)
        & Digits_Of (Day, 2) & "T" & Digits_Of (Hour, 2)
        & Digits_Of (Minute, 2) & Digits_Of (Second, 2) & "Z";
   end Backup_Stem;

   procedure Discard (Path : String) is
      Deleted : Boolean;
   begin
      GNAT.OS_Lib.Delete_File (Path, Deleted);
   end Discard;

   function Owner_Of (Path, Document : String) return Reading is
   begin
      if Text_Files.Size (Path) > Max_Recognised_Bytes then
         return Operators_Words;
      end if;
      declare
         Content : constant String := Text_Files.Read (Path);
      begin
         --  It may have grown between the two looks
         if Content'Length > Max_Recognised_Bytes then
            return Operators_Words;
         end if;
         return Read (Content, Document);
      end;
   end Owner_Of;

   function Before_Of (Home : String; Found : Reading) return String is
     (if Found.Before_Length > 0 then Found.Before
      elsif Text_Files.Is_File (Text_Files.Joined (Home, Backup_Prefix))
      then Backup_Prefix
      else Nothing_Before)
   with Pre => Found.Whose = Bodys_Own;
   --  An unmarked body's SOUL.md predates the mark, when a body kept one
   --  backup, under Backup_Prefix itself

   function Same_Bytes (Left, Right : String) return Boolean is
     (Text_Files.Size (Left) = Text_Files.Size (Right)
      and then Text_Files.Size (Left) <= Max_Recognised_Bytes
      and then Text_Files.Read (Left) = Text_Files.Read (Right));

   function Backed_Up (Home, Copy : String) return String is
      Stem : constant String := Backup_Stem;
   begin
      for Generation in 1 .. Max_Generations loop
         declare
            Name : constant String :=
              (if Generation = 1 then Stem
               else Stem & "-" & Digits_Of (Generation, 1));
            Path : constant String := Text_Files.Joined (Home, Name);
            Made : Boolean;
         begin
            Text_Files.Link_New (Copy, Path, Made);
            if Made or else (Text_Files.Is_File (Path)
                             and then Same_Bytes (Copy, Path))
            then
               return Name;
            end if;
            --  Not taken, yet not made: this folder refuses links
            exit when not Text_Files.Is_File (Path);
         end;
      end loop;
      return "";
   end Backed_Up;
   --  The name of a backup holding Copy's bytes, "" when none could be made

   procedure Install (Home, Soul, Content : String; Installed : out Boolean)
   is
      Fresh : constant String := Temporary (Home, "new");
   begin
      Text_Files.Write (Fresh, Content);
      GNAT.OS_Lib.Rename_File (Fresh, Soul, Installed);
      if not Installed then
         Discard (Fresh);
      end if;
   end Install;

   procedure Install (Home, Soul, Content : String) is
      Installed : Boolean;
   begin
      Install (Home, Soul, Content, Installed);
      if not Installed then
         Body_Log.Warning ("could not replace " & Soul & "; left as it was");
      end if;
   end Install;

   function Created (Home, Soul, Content : String) return Boolean is
      Fresh : constant String := Temporary (Home, "new");
      Made  : Boolean;
   begin
      Text_Files.Write (Fresh, Content);
      Text_Files.Link_New (Fresh, Soul, Made);
      Discard (Fresh);
      return Made;
   end Created;
   --  Content made SOUL.md where there was none; False when one stands

   procedure Write
     (Home, Document : String; Policy : Body_Config.Soul_Policy)
   is
      Soul : constant String := Text_Files.Joined (Home, Soul_Name);
      Copy : constant String := Temporary (Home, "copy");
      Copied : Boolean;
   begin
      if Policy = Off then
         return;
      end if;
      Text_Files.Make_Directories (Home);
      if Text_Files.Is_File (Soul) and then Owner_Of (Soul, Document).Current
      then
         --  The usual boot: nothing to write, so no copy to judge
         return;
      elsif not Text_Files.Is_File (Soul) then
         if Created (Home, Soul, Marked (Document, Nothing_Before)) then
            return;
         elsif not Text_Files.Is_File (Soul) then
            --  Still none, yet no link: a folder without hard links
            Install (Home, Soul, Marked (Document, Nothing_Before));
            return;
         end if;
      end if;
      GNAT.OS_Lib.Copy_File (Soul, Copy, Copied, Mode => GNAT.OS_Lib.Overwrite,
                             Preserve => GNAT.OS_Lib.Full);
      if not Copied then
         Discard (Copy);
         Body_Log.Warning ("could not read " & Soul & "; left as it was");
         return;
      end if;
      declare
         Found : constant Reading := Owner_Of (Copy, Document);
      begin
         case Found.Whose is
            when Bodys_Own =>
               if not Found.Current then
                  Install (Home, Soul, Marked (Document, Before_Of (Home, Found)));
               end if;
            when Hermes_Default_Persona =>
               Install (Home, Soul, Marked (Document, Default_Before));
            when Edited_Bodys | Operators =>
               if Policy = Replace then
                  declare
                     Backup : constant String := Backed_Up (Home, Copy);
                  begin
                     if Backup = "" then
                        Body_Log.Warning ("could not back up " & Soul
                                          & "; left as it was");
                     else
                        Install (Home, Soul, Marked (Document, Backup));
                     end if;
                  end;
               else
                  Body_Log.Warning
                    (Soul & (if Found.Whose = Edited_Bodys
                             then " was edited since the body wrote it"
                             else " is the operator's own persona")
                     & ": left as it is; " & Replace_Advice);
               end if;
         end case;
      end;
      Discard (Copy);
   exception
      when Ada.IO_Exceptions.Name_Error | Ada.IO_Exceptions.Use_Error
         | Ada.IO_Exceptions.Device_Error | Ada.IO_Exceptions.End_Error =>
         Discard (Copy);
         Discard (Temporary (Home, "new"));
         Body_Log.Warning ("could not write " & Soul
                           & " (the body serves without it)");
   end Write;

   function Put_Back (Before : String) return String is
     (if Before = Nothing_Before then "removes it (there was none before)"
      elsif Before = Default_Before then "puts Hermes's default persona back"
      else "puts back " & Before);
   --  What unmount does with the body's SOUL.md that replaced Before

   function Describe
     (Home, Document : String; Policy : Body_Config.Soul_Policy)
      return String
   is
      Soul  : constant String := Text_Files.Joined (Home, Soul_Name);
      Idle  : constant String := "the body boots with --soul off and leaves it";
   begin
      if not Text_Files.Is_File (Soul) then
         return "missing" & HT & Soul & " does not exist: "
           & (if Policy = Off then "the body boots with --soul off and"
              & " writes none" else "the body writes its own at boot");
      end if;
      declare
         Found : constant Reading := Owner_Of (Soul, Document);
      begin
         case Found.Whose is
            when Hermes_Default_Persona =>
               return "hermes-default" & HT & Soul
                 & " is Hermes's default persona: "
                 & (if Policy = Off then Idle
                    else "the body replaces it at boot; unmount puts it back");
            when Bodys_Own =>
               return "body" & HT & Soul & " is the body's own, unedited: "
                 & (if Policy = Off then Idle
                    elsif Found.Current then "the body leaves it as it is"
                    else "the body rewrites it at boot")
                 & "; unmount " & Put_Back (Before_Of (Home, Found));
            when Edited_Bodys | Operators =>
               return "operator" & HT & Soul
                 & (if Found.Whose = Edited_Bodys
                    then " is the body's, edited since it was written: "
                    else " is the operator's own persona: ")
                 & (case Policy is
                      when Off => Idle,
                      when Keep => "the body leaves it as it is (with"
                        & " --soul replace it would replace it, keeping a"
                        & " backup)",
                      when Replace => "the body replaces it at boot (--soul"
                        & " replace), keeping it as " & Backup_Prefix
                        & ".<UTC time>");
         end case;
      end;
   end Describe;

   procedure Restore
     (Home, Document : String; Outcome : out Unbounded_String)
   is
      Soul : constant String := Text_Files.Joined (Home, Soul_Name);
      Done : Boolean;
   begin
      if not Text_Files.Is_File (Soul) then
         Outcome := To_Unbounded_String
           ("missing" & HT & Soul & " does not exist: nothing to put back");
         return;
      end if;
      declare
         Found : constant Reading := Owner_Of (Soul, Document);
      begin
         case Found.Whose is
            when Hermes_Default_Persona | Operators =>
               Outcome := To_Unbounded_String
                 ("kept" & HT & Soul & " is not the body's: left as it is");
            when Edited_Bodys =>
               Outcome := To_Unbounded_String
                 ("kept" & HT & Soul & " was edited since the body wrote it:"
                  & " left as it is");
            when Bodys_Own =>
               declare
                  Before : constant String := Before_Of (Home, Found);
                  Backup : constant String := Text_Files.Joined (Home, Before);
                  Fresh  : constant String := Temporary (Home, "new");
               begin
                  if Before = Nothing_Before then
                     GNAT.OS_Lib.Delete_File (Soul, Done);
                     Outcome := To_Unbounded_String
                       ("removed" & HT & Soul & ": the body's is removed, as"
                        & " there was none before it (Hermes writes its"
                        & " default persona at its next start)");
                  elsif Before = Default_Before then
                     Install (Home, Soul, Hermes_Default, Done);
                     Outcome := To_Unbounded_String
                       ("restored" & HT & Soul
                        & ": Hermes's default persona is back");
                  elsif not Text_Files.Is_File (Backup) then
                     Done := True;
                     Outcome := To_Unbounded_String
                       ("kept" & HT & Soul & " is the body's, but " & Backup
                        & ", the persona it replaced, is gone: left as it"
                        & " is");
                  else
                     GNAT.OS_Lib.Copy_File
                       (Backup, Fresh, Done, Mode => GNAT.OS_Lib.Overwrite,
                        Preserve => GNAT.OS_Lib.Full);
                     if Done then
                        GNAT.OS_Lib.Rename_File (Fresh, Soul, Done);
                     end if;
                     if not Done then
                        Discard (Fresh);
                     end if;
                     Outcome := To_Unbounded_String
                       ("restored" & HT & Soul & ": put back " & Before
                        & ", the persona the body's replaced (the backup"
                        & " stays)");
                  end if;
                  if not Done then
                     raise Ada.IO_Exceptions.Use_Error with
                       Soul & ": could not be put back";
                  end if;
               end;
         end case;
      end;
   end Restore;

end Soul_Writer;
