--  mafiabot: the body Hermes mounts as an MCP stdio server.
--
--  Boot: read the command line and the organ fixture, choose the organs
--  (the stub organs of the fixture, through the seam any implementation
--  is chosen by: Organs.Sets), fix the Big-3 identity and write SOUL.md
--  (B2) as --soul allows; choose the effects a turn has (where sessions
--  are kept, who thinks, the client channel every message goes through)
--  and inject them; then serve stdin line by line until it closes.
--  A configuration that cannot work exits 2 before serving.  --soul-state
--  and --soul-restore answer one line about SOUL.md on stdout and exit
--  without serving.

with Ada.Exceptions;
with Ada.IO_Exceptions;
with Ada.Strings.Unbounded;
with Ada.Text_IO;
with GNAT.OS_Lib;
with Body_Config;
with Body_Log;
with Client_Channels;
with Energy_Gate;
with Hermes_Protocol;
with Organs.Budget_Box;
with Organs.Identity;
with Organs.Model_Cognition;
with Organs.Model_Intender;
with Organs.Morag.Relevance;
with Organs.Sets;
with Sampling_Port;
with Session_Repositories.Memory;
with Session_Repositories.Postgres;
with Session_Repositories.Stored;
with Session_Store;
with Soul_Writer;
with Stdio_Channel;
with Stub_Organs;
with Stub_Organs.Fixtures;
with Turn_Service;
with Turn_Thinkers;
with Wall_Clocks;

procedure Mafiabot is

   use Ada.Strings.Unbounded;

   Usage_Status : constant := 2;
   Soul_Failure_Status : constant := 1;

   Client   : constant Client_Channels.Channel_Access :=
     new Stdio_Channel.Client;
   Protocol : constant Hermes_Protocol.Server_Access :=
     new Hermes_Protocol.Server;
   Turns    : constant Turn_Service.Service_Access := new Turn_Service.Service;

   procedure Serve_One (Line : String);
   --  Answer one line, if it calls for an answer

   procedure On_Line (Line : String);
   --  Answer one line, then the calls queued while its turn waited

   procedure On_Overflow (Length : Natural);
   --  Refuse a line longer than --max-line-bytes

   procedure Serve_One (Line : String) is
   begin
      Protocol.Handle (Line);
   exception
      --  The request loop's edge: a defect met while serving one line stays
      --  with that line, which is answered -32603, and the body reads on.
      when E : others =>
         Body_Log.Error ("internal error: "
                         & Ada.Exceptions.Exception_Information (E));
         Protocol.Answer_Internal_Error (Line);
   end Serve_One;

   procedure On_Line (Line : String) is
   begin
      Serve_One (Line);
      Protocol.Serve_Queued (Serve_One'Access);
   end On_Line;

   procedure On_Overflow (Length : Natural) is
   begin
      Protocol.Refuse_Oversized (Length);
   end On_Overflow;

   procedure Answer_Soul_Question
     (Question : Body_Config.Soul_Question;
      Policy   : Body_Config.Soul_Policy;
      Home, Soul : String)
   with No_Return;
   --  Print the one line --soul-state or --soul-restore asks for and exit:
   --  0 when it was printed, 1 when SOUL.md could not be read or put back,
   --  2 when no home can be named

   procedure Answer_Soul_Question
     (Question : Body_Config.Soul_Question;
      Policy   : Body_Config.Soul_Policy;
      Home, Soul : String)
   is
      Outcome : Unbounded_String;
   begin
      if Home = "" then
         Body_Log.Error ("no HERMES_HOME, HOME or --hermes-home: no SOUL.md"
                         & " to look at");
         GNAT.OS_Lib.OS_Exit (Usage_Status);
      end if;
      case Question is
         when Body_Config.Show_Soul =>
            Outcome := To_Unbounded_String
              (Soul_Writer.Describe (Home, Soul, Policy));
         when Body_Config.Restore_Soul =>
            Soul_Writer.Restore (Home, Soul, Outcome);
      end case;
      Ada.Text_IO.Put_Line (To_String (Outcome));
      GNAT.OS_Lib.OS_Exit (0);
   exception
      when E : Ada.IO_Exceptions.Name_Error | Ada.IO_Exceptions.Use_Error
         | Ada.IO_Exceptions.Device_Error | Ada.IO_Exceptions.End_Error =>
         Body_Log.Error (Ada.Exceptions.Exception_Message (E));
         GNAT.OS_Lib.OS_Exit (Soul_Failure_Status);
   end Answer_Soul_Question;

   Budget_Clock : aliased Wall_Clocks.Turn_Clock;
   --  Budget (--energy budget): the clock the Drive-Box reads, pinned by
   --  the sampling thinker to a turn's first round in the 2026-07-28 form

   Settings : Body_Config.Settings;
   Stub     : Stub_Organs.Fixture;
   Sessions : Session_Repositories.Repository_Access;
   Stored   : Session_Repositories.Stored.Stored_Access;
   --  With --state FILE: the store Sessions is
   Database_Secret : Unbounded_String;
   --  With --state postgresql://...: the secret kept in the database

   function Drawn_Secret return String;
   --  32 bytes of /dev/urandom, in hex: the secret of a body without a
   --  store, which lives as long as the body

   function Drawn_Secret return String is
      use type GNAT.OS_Lib.File_Descriptor;
      Digits_Of : constant String := "0123456789abcdef";
      Source    : constant GNAT.OS_Lib.File_Descriptor :=
        GNAT.OS_Lib.Open_Read ("/dev/urandom", GNAT.OS_Lib.Binary);
      Bytes     : String (1 .. 32);
      Got       : Integer := -1;
      Spelled   : String (1 .. 64);
   begin
      if Source /= GNAT.OS_Lib.Invalid_FD then
         Got := GNAT.OS_Lib.Read (Source, Bytes'Address, Bytes'Length);
         GNAT.OS_Lib.Close (Source);
      end if;
      if Got /= Bytes'Length then
         Body_Log.Error ("cannot draw a secret from /dev/urandom:"
                         & " requestState could not be authenticated");
         GNAT.OS_Lib.OS_Exit (Usage_Status);
      end if;
      for Index in Bytes'Range loop
         Spelled (2 * Index - 1) :=
           Digits_Of (Character'Pos (Bytes (Index)) / 16 + 1);
         Spelled (2 * Index) :=
           Digits_Of (Character'Pos (Bytes (Index)) mod 16 + 1);
      end loop;
      return Spelled;
   end Drawn_Secret;

   function Sampled_Thinker return Turn_Thinkers.Thinker_Access;
   --  --cognition sampling: the client's model asked over MCP sampling,
   --  through the channel, the protocol serving the lines meanwhile

   function Sampled_Thinker return Turn_Thinkers.Thinker_Access is
      use type Body_Config.Energy_Source;
      Thinker : constant Sampling_Port.Thinker_Access :=
        new Sampling_Port.Thinker;
   begin
      Thinker.Connect
        (Client           => Client,
         Lines            => Sampling_Port.Line_Server_Access (Protocol),
         Limits           => (Max_Depth    => Settings.Max_Depth,
                              Max_Elements => Settings.Max_Elements),
         Turn_Deadline_Ms => Settings.Turn_Deadline_Ms);
      if Length (Database_Secret) > 0 then
         --  Every body on the database shares it, as on a file
         Thinker.Set_Secret (To_String (Database_Secret));
      elsif Session_Repositories.Stored."=" (Stored, null) then
         Thinker.Set_Secret (Drawn_Secret);
      else
         declare
            Secret : Unbounded_String;
            Kept   : Session_Store.Outcome;
         begin
            --  Every body on the store shares it: a call's rounds may go to
            --  any of them, before and after a restart
            Stored.Store_Of.Keep_Secret (Secret, Kept);
            if Kept.Failed then
               Body_Log.Error (Session_Store.Diagnostic (Kept));
               GNAT.OS_Lib.OS_Exit (Usage_Status);
            end if;
            Thinker.Set_Secret (To_String (Secret));
         end;
      end if;
      if Settings.Energy = Body_Config.Budget then
         Thinker.Pin_Rounds_On (Budget_Clock'Unchecked_Access);
      end if;
      return Turn_Thinkers.Thinker_Access (Thinker);
   end Sampled_Thinker;

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
      Stub := Stub_Organs.Fixtures.Load
        (if Length (Settings.Organs_Path) > 0
         then To_String (Settings.Organs_Path)
         else Body_Config.Default_Organs_Path);
      if Length (Settings.Thresholds) > 0 then
         Stub_Organs.Set_Curve
           (Stub,
            Stub_Organs.Fixtures.Parse_Curve (To_String (Settings.Thresholds)));
      end if;
      if Session_Repositories.Postgres.Names_A_Database
           (To_String (Settings.State_Path))
      then
         declare
            use type Body_Config.Energy_Source;
            Opened : Session_Repositories.Status;
         begin
            --  --state postgresql://...: every turn reads its session from
            --  the database and commits it there before its reply is
            --  written; the secret is made with the schema, so it is
            --  proposed whatever the cognition
            Session_Repositories.Postgres.Open
              (Url             => To_String (Settings.State_Path),
               Capacity        => Settings.Max_Sessions,
               Busy_Timeout_Ms => Settings.State_Busy_Ms,
               Keeps_Budgets   => Settings.Energy = Body_Config.Budget,
               Proposed_Secret => Drawn_Secret,
               Opened          => Sessions,
               Secret          => Database_Secret,
               Result          => Opened);
            if Opened.Failed then
               --  As a bad store file: one line naming the server, exit 2
               Body_Log.Error ("session store " & To_String (Opened.Reason));
               GNAT.OS_Lib.OS_Exit (Usage_Status);
            end if;
         end;
      elsif Length (Settings.State_Path) > 0 then
         declare
            use type Body_Config.State_Durability;
            use type Body_Config.Energy_Source;
            Opened : Session_Store.Outcome;
         begin
            --  --state: every turn reads its session from the store and
            --  commits it there before its reply is written
            Stored := new Session_Repositories.Stored.Repository;
            if Settings.Energy = Body_Config.Budget then
               Stored.Store_Of.Keep_Budgets;
            end if;
            Stored.Open
              (Path            => To_String (Settings.State_Path),
               Capacity        => Settings.Max_Sessions,
               Busy_Timeout_Ms => Settings.State_Busy_Ms,
               Full_Sync       => Settings.State_Sync = Body_Config.Full,
               Result          => Opened);
            Sessions := Session_Repositories.Repository_Access (Stored);
            if Opened.Failed then
               --  As a bad fixture: one line naming the file, exit 2,
               --  before SOUL.md is touched
               Body_Log.Error (Session_Store.Diagnostic (Opened));
               GNAT.OS_Lib.OS_Exit (Usage_Status);
            end if;
         end;
      end if;
   exception
      when E : Body_Config.Usage_Error =>
         --  The line that says why, and where the options are: the whole
         --  usage would push it out of the tail a Hermes log or doctor shows
         Body_Log.Error (Ada.Exceptions.Exception_Message (E));
         Ada.Text_IO.Put_Line
           (Ada.Text_IO.Standard_Error, "(mafiabot --help lists the options)");
         GNAT.OS_Lib.OS_Exit (Usage_Status);
      when E : Stub_Organs.Fixture_Error =>
         --  The command line was right, the file it names is not
         Body_Log.Error (Ada.Exceptions.Exception_Message (E));
         GNAT.OS_Lib.OS_Exit (Usage_Status);
   end;

   if Session_Repositories."=" (Sessions, null) then
      declare
         Memory : constant Session_Repositories.Memory.Memory_Access :=
           new Session_Repositories.Memory.Repository;
      begin
         Memory.Set_Capacity (Settings.Max_Sessions);
         Sessions := Session_Repositories.Repository_Access (Memory);
      end;
   end if;

   declare
      use type Body_Config.Soul_Policy;
      use type Body_Config.Intender_Kind;
      Stubs    : constant Organs.Sets.Organ_Set :=
        Stub_Organs.Organs_Of (new Stub_Organs.Fixture'(Stub));
      Recalling : constant Organs.Sets.Organ_Set :=
        (case Settings.Recall is
            when Body_Config.Fixture => Stubs,
            when Body_Config.Relevance =>
              (Stubs with delta Morag =>
                 new Organs.Morag.Relevance.Organ'(null record)));
      --  --recall relevance: the session's turns ranked by BM25
      Thinking : constant Organs.Sets.Organ_Set :=
        (case Settings.Cognition is
            when Body_Config.Stub => Recalling,
            when Body_Config.Sampling =>
              (Recalling with delta Cognition =>
                 new Organs.Model_Cognition.Organ'
                   (Fallback   => Stubs.Cognition,
                    Timeout_Ms => Settings.Sampling_Timeout_Ms,
                    Max_Tokens => Settings.Sampling_Max_Tokens)));
      --  --cognition sampling: the stub's cognition asked of the client's
      --  model, the stub's own where the client cannot be asked
      Metered  : constant Organs.Sets.Organ_Set :=
        (case Settings.Energy is
            when Body_Config.Fixture => Thinking,
            when Body_Config.Budget =>
              (Thinking with delta Drive_Box =>
                 new Organs.Budget_Box.Organ'
                   (Clock => Budget_Clock'Unchecked_Access,
                    Limit =>
                      (Calls    => Settings.Budget_Calls,
                       Window_S => Settings.Budget_Window_S,
                       Tokens   => Settings.Budget_Tokens))));
      --  --energy budget: E from the session's model budget, on the curve
      --  derived from the calls a turn plans
      Chosen   : constant Organs.Sets.Organ_Set :=
        (case Settings.Intender is
            when Body_Config.Rules => Metered,
            when Body_Config.Model =>
              (Metered with delta Intender =>
                 new Organs.Model_Intender.Organ'
                   (Fallback   => Stubs.Intender,
                    Timeout_Ms => Settings.Sampling_Timeout_Ms)));
      --  --intent model (only with --cognition sampling, Body_Config
      --  sees to it): the intent asked of the client's model, the rules'
      --  where its answer names none
      Curve    : constant Energy_Gate.Threshold_Curve :=
        (case Settings.Energy is
            when Body_Config.Fixture => Stub_Organs.Curve (Stub),
            when Body_Config.Budget =>
              Energy_Gate.Budget_Curve
                (Asks_Intent => Settings.Intender = Body_Config.Model));
      Identity : constant Organs.Identity.Big_Three :=
        Chosen.Identity.Draw (Chosen.Deck.all);
      Home     : constant String := Body_Config.Resolved_Hermes_Home (Settings);
      Soul     : constant String :=
        Organs.Identity.Soul_Document
          (Chosen.Identity.all, Chosen.Deck.all, Identity);
   begin
      if Settings.Soul_Task in Body_Config.Soul_Question then
         Answer_Soul_Question (Settings.Soul_Task, Settings.Soul, Home, Soul);
      elsif Settings.Soul /= Body_Config.Off then
         if Home = "" then
            Body_Log.Warning ("no HERMES_HOME or HOME: SOUL.md not written");
         else
            Soul_Writer.Write (Home, Soul, Settings.Soul);
         end if;
      end if;
      Turns.Configure
        (Chosen, Curve, Sessions,
         (case Settings.Cognition is
             when Body_Config.Stub => new Turn_Thinkers.Stub_Thinker,
             when Body_Config.Sampling => Sampled_Thinker));
      Protocol.Configure (Settings, Chosen, Identity, Client, Turns);
   end;

   Stdio_Channel.Serve_Lines
     (Max_Line_Bytes => Settings.Max_Line_Bytes,
      On_Line        => On_Line'Unrestricted_Access,
      On_Overflow    => On_Overflow'Unrestricted_Access);

   --  End of input: leave at once.  Finalizing a large session table would
   --  only delay the exit the client is waiting for; a store is closed, so
   --  that the next body to open it has no journal to read.
   Turns.Close;
   GNAT.OS_Lib.OS_Exit (0);
end Mafiabot;
