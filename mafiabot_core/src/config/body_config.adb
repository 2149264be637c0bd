with Ada.Command_Line;
with Ada.Environment_Variables;
with GNAT.OS_Lib;
with Text_Files;

package body Body_Config is

   function From_Command_Line return Settings is
      use Ada.Command_Line;
      Result : Settings;
      Index  : Positive := 1;

      function Value_Of (Option : String) return String is
      begin
         if Index = Argument_Count then
            raise Usage_Error with Option & " needs a value";
         end if;
         Index := Index + 1;
         return Argument (Index);
      end Value_Of;

      function Count_Of (Option : String; Low, High : Positive)
        return Positive
      is
         Text : constant String := Value_Of (Option);
         Number : Long_Long_Integer;
      begin
         if Text'Length = 0 or else Text'Length > 12
           or else (for some C of Text => C not in '0' .. '9')
         then
            raise Usage_Error with Option & " needs a whole number, got '"
              & Text & "'";
         end if;
         Number := Long_Long_Integer'Value (Text);
         if Number not in Long_Long_Integer (Low) .. Long_Long_Integer (High)
         then
            raise Usage_Error with Option & " must lie in" & Low'Image
              & " .." & High'Image & ", got " & Text;
         end if;
         return Positive (Number);
      end Count_Of;
   begin
      while Index <= Argument_Count loop
         declare
            Option : constant String := Argument (Index);
         begin
            if Option = "--organs" then
               Result.Organs_Path := To_Unbounded_String (Value_Of (Option));
            elsif Option = "--thresholds" then
               Result.Thresholds := To_Unbounded_String (Value_Of (Option));
            elsif Option = "--max-line-bytes" then
               Result.Max_Line_Bytes :=
                 Count_Of (Option, 256, 256 * 1024 * 1024);
            elsif Option = "--max-depth" then
               Result.Max_Depth := Count_Of (Option, 2, 1000);
            elsif Option = "--max-elements" then
               Result.Max_Elements := Count_Of (Option, 16, 100_000_000);
            elsif Option = "--max-sessions" then
               Result.Max_Sessions := Count_Of (Option, 1, 10_000_000);
            elsif Option = "--hermes-home" then
               Result.Hermes_Home := To_Unbounded_String (Value_Of (Option));
            elsif Option = "--soul" then
               declare
                  Policy : constant String := Value_Of (Option);
               begin
                  --  Exactly the lower-case names: 'Value alone would
                  --  also take " KEEP "
                  if Policy not in "keep" | "replace" | "off" then
                     raise Usage_Error with Option
                       & " needs keep, replace or off, got '" & Policy & "'";
                  end if;
                  Result.Soul := Soul_Policy'Value (Policy);
               end;
            elsif Option = "--text-block" then
               declare
                  Form : constant String := Value_Of (Option);
               begin
                  if Form not in "full" | "compact" then
                     raise Usage_Error with Option
                       & " needs full or compact, got '" & Form & "'";
                  end if;
                  Result.Text_Block := Text_Block_Form'Value (Form);
               end;
            elsif Option = "--cognition" then
               declare
                  Kind : constant String := Value_Of (Option);
               begin
                  if Kind not in "stub" | "sampling" then
                     raise Usage_Error with Option
                       & " needs stub or sampling, got '" & Kind & "'";
                  end if;
                  Result.Cognition := Cognition_Kind'Value (Kind);
               end;
            elsif Option = "--sampling-timeout-ms" then
               Result.Sampling_Timeout_Ms := Count_Of (Option, 1, 3_600_000);
            elsif Option = "--turn-deadline-ms" then
               Result.Turn_Deadline_Ms := Count_Of (Option, 1, 3_600_000);
            elsif Option = "--sampling-max-tokens" then
               Result.Sampling_Max_Tokens := Count_Of (Option, 1, 1_000_000);
            elsif Option = "--no-soul" then
               Result.Soul := Off;
            elsif Option = "--soul-state" then
               Result.Soul_Task := Show_Soul;
            elsif Option = "--soul-restore" then
               Result.Soul_Task := Restore_Soul;
            elsif Option = "--help" or else Option = "-h" then
               Result.Show_Help := True;
            elsif Option = "--version" then
               Result.Show_Version := True;
            else
               raise Usage_Error with "unknown option '" & Option & "'";
            end if;
         end;
         Index := Index + 1;
      end loop;
      return Result;
   end From_Command_Line;

   function Default_Organs_Path return String is
      use Text_Files;
      use type GNAT.OS_Lib.String_Access;
      Executable : GNAT.OS_Lib.String_Access :=
        GNAT.OS_Lib.Locate_Exec_On_Path (Ada.Command_Line.Command_Name);
   begin
      if Executable = null then
         return Joined (Joined ("stubs", "organs"), "default.json");
      end if;
      declare
         Bin    : constant String :=
           Parent_Of (GNAT.OS_Lib.Normalize_Pathname (Executable.all));
         Prefix : constant String := Parent_Of (Parent_Of (Bin));
      begin
         GNAT.OS_Lib.Free (Executable);
         return Joined (Joined (Joined (Prefix, "stubs"), "organs"),
                        "default.json");
      end;
   end Default_Organs_Path;

   function Resolved_Hermes_Home (Self : Settings) return String is
      use Ada.Environment_Variables;
   begin
      if Length (Self.Hermes_Home) > 0 then
         return To_String (Self.Hermes_Home);
      elsif Exists ("HERMES_HOME") and then Value ("HERMES_HOME") /= "" then
         return Value ("HERMES_HOME");
      elsif Exists ("HOME") and then Value ("HOME") /= "" then
         return Text_Files.Joined (Value ("HOME"), ".hermes");
      else
         return "";
      end if;
   end Resolved_Hermes_Home;

end Body_Config;
