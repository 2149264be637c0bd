with Ada.Characters.Handling;
with Ada.Command_Line;
with Ada.Strings.Fixed;
with Ada.Environment_Variables;
with GNAT.OS_Lib;
with Organs.Budget_Box;
with Text_Files;

package body Body_Config is

   --  The least budget a session may be given: one full turn's calls
   --  (--intent model asks the model once more a turn)
   function Least_Budget_Calls (Intender : Intender_Kind) return Positive is
     (Energy_Gate.Full_Turn_Calls (Asks_Intent => Intender = Model));

   function From_Command_Line return Settings is
      use Ada.Command_Line;
      Result : Settings;
      Index  : Positive := 1;

      Attached       : Unbounded_String;
      Is_Attached    : Boolean := False;
      --  The value written into the argument itself (--opt=value), until
      --  the option takes it

      --  An option's value: the one attached to it, else the next argument
      function Value_Of (Option : String) return String is
      begin
         if Is_Attached then
            Is_Attached := False;
         elsif Index = Argument_Count then
            raise Usage_Error with Option & " needs a value";
         else
            Index := Index + 1;
            Attached := To_Unbounded_String (Argument (Index));
         end if;
         return To_String (Attached);
      end Value_Of;

      --  A free text's value (a file, a directory, a curve), never empty:
      --  an empty one would read as the option left out.  A count or a
      --  choice refuses an empty value as any other it does not take.
      function Text_Of (Option : String) return Unbounded_String is
         Text : constant String := Value_Of (Option);
      begin
         if Text = "" then
            raise Usage_Error with Option & " needs a value, got an empty one";
         end if;
         return To_Unbounded_String (Text);
      end Text_Of;

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

      --  The value of Option: one of Choice's names, exactly in lower case
      --  ('Value alone would also take " KEEP "), or a refusal naming them
      generic
         type Choice is (<>);
      function Choice_Of (Option : String) return Choice;

      function Choice_Of (Option : String) return Choice is
         Given : constant String := Value_Of (Option);
         Names : Unbounded_String;
      begin
         for Each in Choice loop
            declare
               Name : constant String :=
                 Ada.Characters.Handling.To_Lower (Each'Image);
            begin
               if Given = Name then
                  return Each;
               end if;
               Append (Names, (if Each = Choice'First then ""
                               elsif Each = Choice'Last then " or "
                               else ", ") & Name);
            end;
         end loop;
         raise Usage_Error with Option & " needs " & To_String (Names)
           & ", got '" & Given & "'";
      end Choice_Of;

      function Soul_Of is new Choice_Of (Soul_Policy);
      function Text_Block_Of is new Choice_Of (Text_Block_Form);
      function Cognition_Of is new Choice_Of (Cognition_Kind);
      function Intender_Of is new Choice_Of (Intender_Kind);
      function Recall_Of is new Choice_Of (Recall_Kind);
      function Durability_Of is new Choice_Of (State_Durability);
      function Energy_Of is new Choice_Of (Energy_Source);
      Budget_Option : Unbounded_String;
      --  The last --budget-* option given, for the refusal without
      --  --energy budget
   begin
      while Index <= Argument_Count loop
         declare
            Given  : constant String := Argument (Index);
            Equals : constant Natural :=
              (if Given'Length > 2
                 and then Given (Given'First .. Given'First + 1) = "--"
               then Ada.Strings.Fixed.Index (Given, "=") else 0);
            --  --opt=value: the option is what stands before the first
            --  '=', the value all after it ('=' included)
            Option : constant String :=
              (if Equals = 0 then Given else Given (Given'First .. Equals - 1));
         begin
            Is_Attached := Equals > 0;
            if Is_Attached then
               Attached := To_Unbounded_String
                 (Given (Equals + 1 .. Given'Last));
            end if;
            if Option = "--organs" then
               Result.Organs_Path := Text_Of (Option);
            elsif Option = "--thresholds" then
               Result.Thresholds := Text_Of (Option);
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
               Result.Hermes_Home := Text_Of (Option);
            elsif Option = "--soul" then
               Result.Soul := Soul_Of (Option);
            elsif Option = "--text-block" then
               Result.Text_Block := Text_Block_Of (Option);
            elsif Option = "--cognition" then
               Result.Cognition := Cognition_Of (Option);
            elsif Option = "--intent" then
               Result.Intender := Intender_Of (Option);
            elsif Option = "--recall" then
               Result.Recall := Recall_Of (Option);
            elsif Option = "--sampling-timeout-ms" then
               Result.Sampling_Timeout_Ms := Count_Of (Option, 1, 3_600_000);
            elsif Option = "--turn-deadline-ms" then
               Result.Turn_Deadline_Ms := Count_Of (Option, 1, 3_600_000);
            elsif Option = "--sampling-max-tokens" then
               Result.Sampling_Max_Tokens := Count_Of (Option, 1, 1_000_000);
            elsif Option = "--state" then
               Result.State_Path := Text_Of (Option);
            elsif Option = "--state-busy-ms" then
               Result.State_Busy_Ms := Count_Of (Option, 1, 600_000);
            elsif Option = "--state-sync" then
               Result.State_Sync := Durability_Of (Option);
            elsif Option = "--energy" then
               Result.Energy := Energy_Of (Option);
            elsif Option = "--budget-calls" then
               Result.Budget_Calls :=
                 Count_Of (Option, 1, Organs.Budget_Box.Max_Calls);
               Budget_Option := To_Unbounded_String (Option);
            elsif Option = "--budget-window-s" then
               Result.Budget_Window_S :=
                 Count_Of (Option, 1, Organs.Budget_Box.Max_Window_S);
               Budget_Option := To_Unbounded_String (Option);
            elsif Option = "--budget-tokens" then
               Result.Budget_Tokens :=
                 Count_Of (Option, 1, Organs.Budget_Box.Max_Tokens);
               Budget_Option := To_Unbounded_String (Option);
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
            if Is_Attached then
               raise Usage_Error with Option & " takes no value";
            end if;
         end;
         Index := Index + 1;
      end loop;
      if Result.Intender = Model and then Result.Cognition /= Sampling then
         raise Usage_Error with "--intent model needs --cognition sampling:"
           & " the intent is asked of the client's model over MCP sampling";
      elsif Result.Energy = Fixture and then Length (Budget_Option) > 0 then
         raise Usage_Error with To_String (Budget_Option)
           & " needs --energy budget";
      elsif Result.Energy = Budget and then Length (Result.Thresholds) > 0
      then
         raise Usage_Error with "--thresholds sets the fixture's curve:"
           & " --energy budget derives its own (docs/energy.md)";
      elsif Result.Energy = Budget
        and then Result.Budget_Calls < Least_Budget_Calls (Result.Intender)
      then
         raise Usage_Error with "--budget-calls" & Result.Budget_Calls'Image
           & " is less than one full turn's"
           & Least_Budget_Calls (Result.Intender)'Image
           & " model calls: no turn could run all eight passes";
      end if;
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
