with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Body_Config;
with Client_Channels;
with Store_Files;
with Hermes_Protocol;
with Organs.Model_Cognition;
with Organs.Model_Intender;
with Organs.Sets;
with Sampling_Port;
with Scripted_Clients;
with Session_Repositories.Memory;
with Session_Repositories.Stored;
with Session_Store;
with Session_Table;
with Organs.Morag;
with Test_Organs;
with Turn_Cycle;
with Turn_Service;
with Turn_Thinkers;

package body Turn_Service_Tests is

   use AUnit.Assertions;
   use type Turn_Service.Turn_End;

   Sampled : aliased constant Organs.Model_Cognition.Organ :=
     (Fallback => Test_Organs.Stub_Set.Cognition, Timeout_Ms => 1000, Max_Tokens => 64);

   function Sampling_Set return Organs.Sets.Organ_Set is
     ((Test_Organs.Stub_Set with delta Cognition => Sampled'Access));

   Asking : aliased constant Organs.Model_Intender.Organ :=
     (Fallback => Test_Organs.Stub_Set.Intender, Timeout_Ms => 1000);

   function Intent_Set return Organs.Sets.Organ_Set is
     ((Sampling_Set with delta Intender => Asking'Access));
   --  --cognition sampling --intent model

   Path : constant String := "tests/ada/obj/turn-service-test.db";
   --  Beside the test objects (the tests run from the checkout's root)

   procedure Remove_Store is
   begin
      Store_Files.Remove (Path);
   end Remove_Store;

   function Opened_Store return Session_Repositories.Repository_Access is
      Stored : constant Session_Repositories.Stored.Stored_Access :=
        new Session_Repositories.Stored.Repository;
      Result : Session_Store.Outcome;
   begin
      Stored.Open (Path, Capacity => 10, Busy_Timeout_Ms => 20, Full_Sync => False, Result => Result);
      Assert (not Result.Failed, "the store opens");
      return Session_Repositories.Repository_Access (Stored);
   end Opened_Store;

   function In_Memory return Session_Repositories.Repository_Access is
     (Session_Repositories.Repository_Access
        (Session_Repositories.Memory.Memory_Access'(new Session_Repositories.Memory.Repository)));

   function Holds (Text, Part : String) return Boolean is
     (Ada.Strings.Fixed.Index (Text, Part) > 0);

   Initialize : constant String :=
     "{""jsonrpc"":""2.0"",""id"":0,""method"":""initialize"",""params"":{""protocolVersion"":""2025-11-25"","
     & """capabilities"":{""sampling"":{}},""clientInfo"":{""name"":""scripted"",""version"":""1""}}}";

   function Call (Id, Uid : String) return String is
     ("{""jsonrpc"":""2.0"",""id"":" & Id & ",""method"":""tools/call"",""params"":{""name"":""turn"","
      & """arguments"":{""input"":""who sits at the head of the table?"",""uid"":""" & Uid
      & """,""channel"":""c"",""server"":""s""}}}");

   --  The body as the boot puts it together for --cognition sampling, with
   --  a scripted client in place of stdio, initialized by a client that
   --  declared sampling
   type Sampling_Body is record
      Client   : Scripted_Clients.Client_Access;
      Protocol : Hermes_Protocol.Server_Access;
   end record;

   function Start
     (Sessions : Session_Repositories.Repository_Access;
      Chosen   : Organs.Sets.Organ_Set := Sampling_Set) return Sampling_Body
   is
      Client   : constant Scripted_Clients.Client_Access := new Scripted_Clients.Client;
      Channel  : constant Client_Channels.Channel_Access := Client_Channels.Channel_Access (Client);
      Protocol : constant Hermes_Protocol.Server_Access := new Hermes_Protocol.Server;
      Turns    : constant Turn_Service.Service_Access := new Turn_Service.Service;
      Thinker  : constant Sampling_Port.Thinker_Access := new Sampling_Port.Thinker;
      Settings : Body_Config.Settings;
   begin
      Settings.Cognition := Body_Config.Sampling;
      Thinker.Connect (Channel, Sampling_Port.Line_Server_Access (Protocol), (64, 1_000_000), 60_000);
      Turns.Configure (Chosen, Test_Organs.Stub_Curve, Sessions, Turn_Thinkers.Thinker_Access (Thinker));
      Protocol.Configure (Settings, Chosen, Chosen.Identity.Draw (Chosen.Deck.all), Channel, Turns);
      Protocol.Handle (Initialize);
      Assert (Client.Count_Of ("""protocolVersion"":""2025-11-25""") = 1, "initialize is answered");
      return (Client, Protocol);
   end Start;

   --  What the request loop does with a line: the line, then the calls
   --  queued while its turn waited
   procedure Serve (Under : Sampling_Body; Line : String) is
      procedure Handle (Queued : String) is
      begin
         Under.Protocol.Handle (Queued);
      end Handle;
   begin
      Under.Protocol.Handle (Line);
      Under.Protocol.Serve_Queued (Handle'Access);
   end Serve;

   function Last_Sent (Under : Sampling_Body) return String is
     (Under.Client.Sent.Last_Element);

   --  How many sampling requests one turn of a new session sends
   function Requests_Of_One_Turn return Natural is
      Under : constant Sampling_Body := Start (In_Memory);
   begin
      Serve (Under, Call ("7", "u"));
      return Under.Client.Asked;
   end Requests_Of_One_Turn;

   --  Every pass and the synthesis asked of the client, in-process, each
   --  answer the client's, the reply written after them through the channel
   procedure Test_A_Sampled_Turn_In_Process (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Under : constant Sampling_Body := Start (In_Memory);
   begin
      Serve (Under, Call ("7", "u"));
      Assert (Under.Client.Asked >= 2, "the passes and the synthesis are asked");
      Assert (Holds (Last_Sent (Under), """id"":7,""result"""), "the turn is answered last");
      Assert (Holds (Last_Sent (Under), Scripted_Clients.Answer_Text), "with the client's answers");
      Assert (not Holds (Last_Sent (Under), """status"":""failed"""), "every call answered");
   end Test_A_Sampled_Turn_In_Process;

   --  Sent while the first request waits: tools/list is answered at once,
   --  a tools/call is queued and runs after the turn, sampling too
   procedure Test_A_Call_Sent_Meanwhile_Is_Queued (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      One   : constant Natural := Requests_Of_One_Turn;
      Under : constant Sampling_Body := Start (In_Memory);
      Reply_Of_Seven : Natural;
   begin
      Under.Client.Before_Answer.Append ("{""jsonrpc"":""2.0"",""id"":""list"",""method"":""tools/list""}");
      Under.Client.Before_Answer.Append (Call ("""second""", "other"));
      Serve (Under, Call ("7", "u"));
      --  initialize's reply, the first request, then the list's reply
      Assert (Under.Client.First_Holding ("""id"":""list"",""result""") = 3,
              "tools/list answered while the first request waits");
      Reply_Of_Seven := Under.Client.First_Holding ("""id"":7,""result""");
      Assert (Reply_Of_Seven > 0
              and then Reply_Of_Seven < Under.Client.First_Holding ("""id"":""second"",""result"""),
              "the queued call runs after the turn in flight is answered");
      Assert (Under.Client.Asked = 2 * One, "and samples as its own turn");
   end Test_A_Call_Sent_Meanwhile_Is_Queued;

   --  A queued call the client cancels spends nothing and gets no answer
   procedure Test_A_Call_Cancelled_While_Queued (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      One   : constant Natural := Requests_Of_One_Turn;
      Under : constant Sampling_Body := Start (In_Memory);
   begin
      Under.Client.Before_Answer.Append (Call ("""queued""", "other"));
      Under.Client.Before_Answer.Append
        ("{""jsonrpc"":""2.0"",""method"":""notifications/cancelled"",""params"":{""requestId"":""queued""}}");
      Serve (Under, Call ("7", "u"));
      Assert (Holds (Last_Sent (Under), """id"":7,""result"""), "the turn in flight is answered");
      Assert (Under.Client.Count_Of ("""queued""") = 0, "the cancelled call gets no answer");
      Assert (Under.Client.Asked = One, "and no sampling request of its own");
   end Test_A_Call_Cancelled_While_Queued;

   --  Through the store, a sampled turn is a long turn: committed before its
   --  reply, found by the next body on the file
   procedure Test_A_Sampled_Turn_On_The_Store (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Remove_Store;
      declare
         Sessions : constant Session_Repositories.Repository_Access := Opened_Store;
         Under    : constant Sampling_Body := Start (Sessions);
      begin
         Serve (Under, Call ("7", "u"));
         Assert (Holds (Last_Sent (Under), Scripted_Clients.Answer_Text), "the sampled turn is answered");
         Sessions.Close;
      end;
      declare
         Sessions : constant Session_Repositories.Repository_Access := Opened_Store;
         Under    : constant Sampling_Body := Start (Sessions);
      begin
         Serve (Under, Call ("8", "u"));
         Assert (Holds (Last_Sent (Under), """turn"":2"), "the next body finds the session's first turn");
         Sessions.Close;
      end;
   end Test_A_Sampled_Turn_On_The_Store;

   --  --intent model: the model's pick routes by the static table, in one
   --  request more a turn; an answer outside the closed set leaves the
   --  intent to the rules, and the result says what the model said and why
   procedure Test_The_Model_States_The_Intent (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Plain : constant Natural := Requests_Of_One_Turn;
      Under : constant Sampling_Body := Start (In_Memory, Intent_Set);
   begin
      Under.Client.Intent_Answer := Ada.Strings.Unbounded.To_Unbounded_String ("Remember.");
      Serve (Under, Call ("7", "u"));
      Assert (Under.Client.Asked = Plain + 1, "one request more:" & Under.Client.Asked'Image);
      Assert (Holds (Last_Sent (Under), """route"":{""intent"":""remember"",""target"":""memory.store""}"),
              "the model's intent, routed by the static table");
      Assert (Holds (Last_Sent (Under),
                     """intent"":{""stated_by"":""model"",""said"":""Remember."",""fallback"":null}"),
              "the result says the model named it");
      Assert (Holds (Last_Sent (Under), """step"":20,""thinker"":""sampling"",""status"":""answered"""),
              "its call is step 20's");
      Under.Client.Intent_Answer := Ada.Strings.Unbounded.To_Unbounded_String ("memory.store");
      Serve (Under, Call ("8", "u"));
      Assert (Holds (Last_Sent (Under), """route"":{""intent"":""ask"",""target"":""knowledge.answer""}"),
              "a route named is no intent: the rules' intent");
      Assert (Holds (Last_Sent (Under),
                     """intent"":{""stated_by"":""rules"",""said"":""memory.store"",""fallback"":"
                     & """the model's answer names none of the intents offered""}"),
              "the result says what the model said and why the rules stated it");
   end Test_The_Model_States_The_Intent;

   --  The service over either repository: the same turns, counted the same
   procedure Take_Turns (Sessions : Session_Repositories.Repository_Access; From : Positive) is
      Turns  : Turn_Service.Service;
      Trace  : Turn_Cycle.Turn_Trace;
      Result : Turn_Service.Outcome;
   begin
      Turns.Configure (Test_Organs.Stub_Set, Test_Organs.Stub_Curve, Sessions,
                       new Turn_Thinkers.Stub_Thinker);
      for Expected in From .. From + 1 loop
         Turns.Take_Turn (Turn_Thinkers.None, "1", "", "", "u", "c", "s", "hello there", Trace, Result);
         Assert (Result.Ended = Turn_Service.Answered, "the turn is answered");
         Assert (Trace.Turn = Expected, "turn" & Expected'Image & " of the session");
         Assert (Holds (Turn_Cycle.Text_Of (Trace, Trace.Steps (2).Detail),
                        (if Expected = 1 then "recall: nothing" else "recall: 'hello there'")),
                 "turn" & Expected'Image & " recalls what the repository kept of the session's memory");
      end loop;
   end Take_Turns;

   --  The repository's contract, held in both: a work that discards or
   --  raises keeps nothing of its turn (no session made for a new key, no
   --  change to a kept one), and a kept work is there for the next turn
   procedure Test_Only_A_Kept_Work_Is_Kept (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use type Session_Repositories.Verdict;
      Failed : exception;
      Said   : Session_Repositories.Verdict := Session_Repositories.Keep;
      Seen   : Natural := 0;
      --  What the last work found, and what it says

      procedure Count_A_Turn
        (Session : in out Session_Table.Session;
         Memory  : in out Organs.Morag.Memory'Class;
         Result  : out Session_Repositories.Verdict) is
      begin
         Seen := Session.Turns;
         Session.Turns := Session.Turns + 1;
         Memory.Keep (Session.Turns, "turn" & Session.Turns'Image, Organs.Morag.Max_Depth);
         Result := Said;
      end Count_A_Turn;

      procedure Raise_Midway
        (Session : in out Session_Table.Session;
         Memory  : in out Organs.Morag.Memory'Class;
         Result  : out Session_Repositories.Verdict)
      is
         pragma Unreferenced (Result);
      begin
         Session.Turns := Session.Turns + 1;
         Memory.Keep (Session.Turns, "half a turn", Organs.Morag.Max_Depth);
         raise Failed;
      end Raise_Midway;

      procedure Check (Sessions : Session_Repositories.Repository_Access; Kind : String) is
         Status : Session_Repositories.Status;
      begin
         Said := Session_Repositories.Discard;
         Sessions.Within_Turn (Test_Organs.Stub_Set, "k", Session_Repositories.Short,
                               Count_A_Turn'Access, Status);
         Said := Session_Repositories.Keep;
         Sessions.Within_Turn (Test_Organs.Stub_Set, "k", Session_Repositories.Short,
                               Count_A_Turn'Access, Status);
         Assert (not Status.Failed and then Seen = 0, Kind & ": a discarded first turn made no session");
         begin
            Sessions.Within_Turn (Test_Organs.Stub_Set, "k", Session_Repositories.Short,
                                  Raise_Midway'Access, Status);
            Assert (False, Kind & ": the work's exception goes on");
         exception
            when Failed => null;
         end;
         Sessions.Within_Turn (Test_Organs.Stub_Set, "k", Session_Repositories.Short,
                               Count_A_Turn'Access, Status);
         Assert (not Status.Failed and then Seen = 1, Kind & ": the raising work kept nothing:" & Seen'Image);
      end Check;
   begin
      Check (In_Memory, "memory");
      Remove_Store;
      Check (Opened_Store, "store");
      Remove_Store;
   end Test_Only_A_Kept_Work_Is_Kept;

   procedure Test_Both_Repositories (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Take_Turns (In_Memory, From => 1);
      Remove_Store;
      declare
         Sessions : constant Session_Repositories.Repository_Access := Opened_Store;
      begin
         Take_Turns (Sessions, From => 1);
         Sessions.Close;
      end;
      declare
         Sessions : constant Session_Repositories.Repository_Access := Opened_Store;
      begin
         Take_Turns (Sessions, From => 3);
         Sessions.Close;
      end;
   end Test_Both_Repositories;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_A_Sampled_Turn_In_Process'Access, "a sampled turn runs in-process");
      Register_Routine (T, Test_A_Call_Sent_Meanwhile_Is_Queued'Access,
                        "tools/list answered at once, a call queued, while a turn waits");
      Register_Routine (T, Test_A_Call_Cancelled_While_Queued'Access,
                        "a call cancelled while queued spends nothing, gets no answer");
      Register_Routine (T, Test_A_Sampled_Turn_On_The_Store'Access, "a sampled turn is kept by the store");
      Register_Routine (T, Test_Both_Repositories'Access, "the service counts turns the same in both repositories");
      Register_Routine (T, Test_Only_A_Kept_Work_Is_Kept'Access, "a repository keeps only what a work keeps");
      Register_Routine (T, Test_The_Model_States_The_Intent'Access,
                        "--intent model: the model's pick routes, an answer outside falls back");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Turn_Service");
   end Name;

end Turn_Service_Tests;
