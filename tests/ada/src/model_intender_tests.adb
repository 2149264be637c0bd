--  The intent asked of a model (Organs.Model_Intender, --intent model)
--  through the cycle, with a scripted port in place of the MCP client: the
--  strict reading of an answer, the closed set read from the packed schema,
--  the count of a turn's model calls against the order itself, and each
--  way the rules take the intent back, said in the trace.

with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Cycle_Order;
with Energy_Gate;
with Monotonic;
with Organs;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Model_Cognition;
with Organs.Model_Intender;
with Organs.Model_Port;
with Organs.Router;
with Organs.Sets;
with Organs.Texts;
with Session_Keys;
with Session_Table;
with Test_Organs;
with Turn_Cycle;

package body Model_Intender_Tests is

   use AUnit.Assertions;
   use Ada.Strings.Unbounded;
   use type Organs.Intent_Kind;
   use type Organs.Intender.Intent_Source;
   use type Organs.Intender.Model_Fallback;
   use type Organs.Model_Port.Ask_Status;
   use type Cycle_Order.Step_Index;
   use type Cycle_Order.Phase_Kind;

   package Port renames Organs.Model_Port;
   package Intender renames Organs.Intender;

   Input : constant String := "who sits at the head of the table?";

   --  Answers the intent question with Intent_Answer (or fails it, when
   --  Intent_Status says so) and every other question "a thought"; keeps
   --  the intent question's prompts and how many questions it was asked
   type Scripted_Port (Why : Port.Reach) is limited new Port.Port with record
      Intent_Answer : Unbounded_String;
      Intent_Status : Port.Ask_Status := Port.Answered;
      Asked         : Natural := 0;
      Intent_Asked  : Natural := 0;
      Intent_Prompt : Unbounded_String;
      Intent_Tokens : Natural := 0;
   end record;

   overriding function Reach_Of (Self : Scripted_Port) return Port.Reach is (Self.Why);

   overriding procedure Ask
     (Self          : in out Scripted_Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Port.Answer_Facts)
   is
      pragma Unreferenced (Deadline);
      Is_Intent : constant Boolean := System_Prompt = Organs.Model_Intender.System_Prompt;
   begin
      Self.Asked := Self.Asked + 1;
      Port.Clear (Facts);
      Port.Set_Model (Facts, "scripted");
      Facts.Status := (if Is_Intent then Self.Intent_Status else Port.Answered);
      if Is_Intent then
         Self.Intent_Asked := Self.Intent_Asked + 1;
         Self.Intent_Prompt := To_Unbounded_String (Prompt);
         Self.Intent_Tokens := Max_Tokens;
      end if;
      if Facts.Status /= Port.Answered then
         Port.Set_Error (Facts, "scripted failure");
      elsif Is_Intent then
         Organs.Texts.Add (Answer, To_String (Self.Intent_Answer));
      else
         Organs.Texts.Add (Answer, "a thought");
      end if;
   end Ask;

   Asking : aliased constant Organs.Model_Intender.Organ :=
     (Fallback => Test_Organs.Stub_Set.Intender, Timeout_Ms => 1000);

   Thinking : aliased constant Organs.Model_Cognition.Organ :=
     (Fallback => Test_Organs.Stub_Set.Cognition, Timeout_Ms => 1000, Max_Tokens => 64);

   function Asking_Set return Organs.Sets.Organ_Set is
     ((Test_Organs.Stub_Set with delta Cognition => Thinking'Access, Intender => Asking'Access));
   --  As --cognition sampling --intent model puts it together

   function Contains (Text, Part : String) return Boolean is
     (Ada.Strings.Fixed.Index (Text, Part) > 0);

   Intend_Step : constant Cycle_Order.Step_Index := 20;

   procedure Turn
     (Chosen : Organs.Sets.Organ_Set; Through : in out Port.Port'Class;
      Trace : out Turn_Cycle.Turn_Trace)
   is
      Table   : Session_Table.Table;
      Session : Session_Table.Session_Access;
      Memory  : Session_Table.Memory_Access;
   begin
      Table.Open (Chosen, Session_Keys.Key_Of ("u", "c", "s"), Session, Memory);
      Turn_Cycle.Run (Chosen, Test_Organs.Stub_Curve, Session.all, Memory.all, "u", "c", "s", Input, Through,
                      Trace);
   end Turn;

   --  The intent the rules alone state for Input
   function Rules_Intent return Organs.Intent_Kind is
      Nowhere : Port.Unreachable (Port.No_Capability);
      Trace   : Turn_Cycle.Turn_Trace;
   begin
      Turn (Test_Organs.Stub_Set, Nowhere, Trace);
      return Trace.Intent;
   end Rules_Intent;

   function Named (Answer : String; Schema : String := Organs.Mini_Rag.Whole_Table) return String is
      Found  : Boolean;
      Intent : Organs.Intent_Kind;
   begin
      Organs.Model_Intender.Read_Answer (Answer, Schema, Found, Intent);
      return (if Found then Organs.Intent_Name (Intent) else "");
   end Named;

   --  An intent's name, in any case, between white space, with one period
   --  after it; nothing else
   procedure Test_The_Answer_Is_Read_Strictly (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      type Case_Row is record
         Answer, Intent : Unbounded_String;
      end record;
      function Row (Answer, Intent : String) return Case_Row is
        ((To_Unbounded_String (Answer), To_Unbounded_String (Intent)));
      Rows : constant array (Positive range <>) of Case_Row :=
        [Row ("ask", "ask"), Row ("Remember", "remember"), Row ("ACT.", "act"),
         Row ("  chat " & ASCII.LF, "chat"), Row (ASCII.HT & "Ask." & ASCII.CR & ASCII.LF, "ask"),
         Row ("ask..", ""), Row (".ask", ""), Row ("ask .", ""), Row ("ask please", ""),
         Row ("ask, act", ""), Row ("a sk", ""), Row ("""ask""", ""), Row ("", ""), Row ("   ", ""),
         Row ("knowledge.answer", ""), Row ("ask->knowledge.answer", ""), Row ("asks", ""),
         Row ("intent: ask", ""), Row ("ask" & Character'Val (16#C3#) & Character'Val (16#A9#), "")];
   begin
      for Each of Rows loop
         Assert (Named (To_String (Each.Answer)) = To_String (Each.Intent),
                 "'" & To_String (Each.Answer) & "' names '" & Named (To_String (Each.Answer)) & "'");
      end loop;
      for Intent in Organs.Intent_Kind loop
         Assert (Named (Organs.Intent_Name (Intent)) = Organs.Intent_Name (Intent),
                 "every intent of the router can be named");
         Assert (Named (Organs.Router.Route_Of (Intent)) = "", "a route is no intent (L2)");
      end loop;
   end Test_The_Answer_Is_Read_Strictly;

   --  What is offered and accepted is what the schema packs: an intent it
   --  leaves out is neither in the question nor accepted
   procedure Test_The_Closed_Set_Is_The_Packed_Schema (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Seen : Unbounded_String;
      procedure See (Intent : Organs.Intent_Kind; Route : String) is
      begin
         Append (Seen, Organs.Intent_Name (Intent) & "=" & Route & ";");
      end See;
      Partial : constant String := "remember->memory.store|junk|nothing->x||ask->knowledge.ans [cut]";
      Prompt  : constant String := Organs.Model_Intender.Intent_Prompt (Partial, Input);
   begin
      Organs.Mini_Rag.For_Each_Intent (Organs.Mini_Rag.Whole_Table, See'Access);
      Assert (To_String (Seen) = "ask=knowledge.answer;act=tools.execute;remember=memory.store;"
                                 & "chat=conversation.reply;", "the whole table: " & To_String (Seen));
      Seen := Null_Unbounded_String;
      Organs.Mini_Rag.For_Each_Intent (Partial, See'Access);
      Assert (To_String (Seen) = "remember=memory.store;ask=knowledge.ans [cut];",
              "entries naming no intent are left out: " & To_String (Seen));
      Assert (Named ("remember", Partial) = "remember" and then Named ("ask", Partial) = "ask"
              and then Named ("act", Partial) = "" and then Named ("chat", Partial) = "",
              "only the intents offered are accepted");
      Assert (Contains (Prompt, "exactly one of these names: remember, ask.")
              and then Contains (Prompt, "- remember: routed to memory.store")
              and then not Contains (Prompt, "- act") and then not Contains (Prompt, "chat")
              and then Contains (Prompt, Input), "the question offers the schema's intents: " & Prompt);
   end Test_The_Closed_Set_Is_The_Packed_Schema;

   --  The one count of a turn's model calls, against the order walked step
   --  by step (an independent count: which steps run, and which ask)
   procedure Test_Model_Calls_Is_The_Order_Counted (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for Passes in Energy_Gate.Pass_Count loop
         for Intent_Asked in Boolean loop
            declare
               Counted : Natural := 0;
            begin
               for Step in Cycle_Order.Step_Index loop
                  Assert (Cycle_Order.Asks_Model (Step, Intent_Asked) = (Cycle_Order.Phase (Step) in
                            Cycle_Order.Reason | Cycle_Order.Synthesize
                            or else (Intent_Asked and then Cycle_Order.Phase (Step) = Cycle_Order.Intend)),
                          "which steps ask");
                  case Cycle_Order.Phase (Step) is
                     when Cycle_Order.Reason =>
                        if Natural (Cycle_Order.Pass_Of (Step)) <= Passes then
                           Counted := Counted + 1;
                        end if;
                     when Cycle_Order.Synthesize =>
                        Counted := Counted + 1;
                     when Cycle_Order.Intend =>
                        if Intent_Asked then
                           Counted := Counted + 1;
                        end if;
                     when others =>
                        null;
                  end case;
               end loop;
               Assert (Energy_Gate.Planned_Calls (Passes, Intent_Asked) = Counted,
                       "passes" & Passes'Image & ", intent asked " & Intent_Asked'Image);
            end;
         end loop;
      end loop;
      Assert (Energy_Gate.Full_Turn_Calls (True) = Cycle_Order.Max_Model_Calls,
              "a full turn with the intent asked is the most a turn plans");
   end Test_Model_Calls_Is_The_Order_Counted;

   --  The model's pick routes by the static table; the turn asks once more
   --  than without it, at step 20, between the passes and the synthesis
   procedure Test_The_Model_Names_The_Intent (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Trace : Turn_Cycle.Turn_Trace;
   begin
      for Intent in Organs.Intent_Kind loop
         declare
            Through : Scripted_Port (Port.Reachable);
         begin
            Through.Intent_Answer := To_Unbounded_String (" " & Organs.Intent_Name (Intent) & ".");
            Turn (Asking_Set, Through, Trace);
            Assert (Trace.Intent = Intent and then Trace.Intent_Source = Intender.Model
                    and then Trace.Intent_Fallback = Intender.No_Fallback, "the model's intent");
            Assert (Turn_Cycle.Text_Of (Trace, Trace.Route) = Organs.Router.Route_Of (Intent),
                    "routed by the static table");
            Assert (Turn_Cycle.Text_Of (Trace, Trace.Intent_Said) = To_String (Through.Intent_Answer),
                    "what the model said is kept");
            Assert (Through.Intent_Asked = 1 and then Through.Asked = Trace.Passes + 2
                    and then Trace.Call_Last = Energy_Gate.Planned_Calls (Trace.Passes, True),
                    "one intent question, counted:" & Through.Asked'Image);
            Assert (Through.Intent_Tokens = Organs.Model_Intender.Max_Intent_Tokens, "a word's tokens");
            Assert (Trace.Calls (Trace.Call_Last - 1).Step = Intend_Step
                    and then Trace.Calls (Trace.Call_Last - 1).Call.Asked
                    and then Trace.Calls (Trace.Call_Last).Step = 22, "in step order");
            Assert (Turn_Cycle.Text_Of (Trace, Trace.Steps (Intend_Step).Detail)
                    = "intent " & Organs.Intent_Name (Intent) & " (named by the model)",
                    Turn_Cycle.Text_Of (Trace, Trace.Steps (Intend_Step).Detail));
            Assert (Contains (To_String (Through.Intent_Prompt), Input)
                    and then not Contains (To_String (Through.Intent_Prompt), "a thought"),
                    "the question holds the turn, not the passes' thoughts");
         end;
      end loop;
   end Test_The_Model_Names_The_Intent;

   --  Outside the set, no answer, no model to ask: the rules' intent, and
   --  the trace says why
   procedure Test_The_Rules_Take_It_Back (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      By_Rules : constant Organs.Intent_Kind := Rules_Intent;
      Trace    : Turn_Cycle.Turn_Trace;
      Long     : constant String := [1 .. 300 => 'z'];
      type Outside_Answers is array (1 .. 4) of Unbounded_String;

      procedure Check (Why : Intender.Model_Fallback; Note : String) is
         Detail : constant String := Turn_Cycle.Text_Of (Trace, Trace.Steps (Intend_Step).Detail);
      begin
         Assert (Trace.Intent = By_Rules and then Trace.Intent_Source = Intender.Rules
                 and then Trace.Intent_Fallback = Why, "the rules' intent, for " & Why'Image);
         Assert (Turn_Cycle.Text_Of (Trace, Trace.Route) = Organs.Router.Route_Of (By_Rules), "their route");
         Assert (Contains (Detail, "fixture rule") and then Contains (Detail, Note), Detail);
         Assert (Trace.Call_Last = Energy_Gate.Planned_Calls (Trace.Passes, True), "the call is recorded");
      end Check;
   begin
      for Outside of Outside_Answers'(To_Unbounded_String ("knowledge.answer"),
                                      To_Unbounded_String ("I think: ask"),
                                      To_Unbounded_String ("ask.."), To_Unbounded_String (Long))
      loop
         declare
            Through : Scripted_Port (Port.Reachable);
         begin
            Through.Intent_Answer := Outside;
            Turn (Asking_Set, Through, Trace);
            Check (Intender.Outside_Set, "; the model named no intent");
            declare
               Said : constant String := Turn_Cycle.Text_Of (Trace, Trace.Intent_Said);
            begin
               Assert (Said'Length <= Intender.Max_Said_Bytes, "what it said, bounded");
               Assert ((if Length (Outside) <= Intender.Max_Said_Bytes then Said = To_String (Outside)
                        else Contains (Said, Organs.Texts.Cut_Mark)), "kept, or visibly cut: " & Said);
            end;
         end;
      end loop;
      declare
         Through : Scripted_Port (Port.Reachable);
      begin
         Through.Intent_Status := Port.Timed_Out;
         Turn (Asking_Set, Through, Trace);
         Check (Intender.Unanswered, "; the model gave no answer");
         Assert (Organs.Texts.Is_Empty (Trace.Intent_Said), "nothing said");
         Assert (Trace.Calls (Trace.Call_Last - 1).Call.Facts.Status = Port.Timed_Out, "the call says how");
         Assert (not Turn_Cycle.Got_No_Thought (Trace), "the passes' thoughts still came");
      end;
      declare
         Through : Scripted_Port (Port.No_Capability);
      begin
         Turn (Asking_Set, Through, Trace);
         Check (Intender.Unreachable, "; no model to ask");
         Assert (Through.Asked = 0 and then not Trace.Calls (Trace.Call_Last - 1).Call.Asked,
                 "nothing asked");
      end;
   end Test_The_Rules_Take_It_Back;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_The_Answer_Is_Read_Strictly'Access, "model intender: the answer is read strictly");
      Register_Routine (T, Test_The_Closed_Set_Is_The_Packed_Schema'Access,
                        "model intender: the closed set is the packed schema's");
      Register_Routine (T, Test_Model_Calls_Is_The_Order_Counted'Access,
                        "model intender: a turn's model calls are the order's");
      Register_Routine (T, Test_The_Model_Names_The_Intent'Access, "model intender: the model names the intent");
      Register_Routine (T, Test_The_Rules_Take_It_Back'Access, "model intender: the rules take it back, saying why");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Organs.Model_Intender");
   end Name;

end Model_Intender_Tests;
