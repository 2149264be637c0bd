--  The sampling cognition (Organs.Model_Cognition) through the cycle, with a
--  scripted port in place of the MCP client: what it asks, what it keeps of
--  each answer, how a failed question shows, and that with no model to reach
--  it is the stub's cognition byte for byte.

with Monotonic;
with Ada.Strings.Fixed;
with AUnit.Assertions;
with Cycle_Order;
with Energy_Gate;
with Organs;
with Organs.Model_Cognition;
with Organs.Model_Port;
with Organs.Sets;
with Organs.Texts;
with Session_Keys;
with Session_Table;
with Test_Organs;
with Turn_Cycle;

package body Model_Cognition_Tests is

   use AUnit.Assertions;
   use type Organs.Model_Port.Ask_Status;
   use type Organs.Model_Port.Reach;
   use type Cycle_Order.Step_Index;

   package Port renames Organs.Model_Port;

   type Outcomes is array (1 .. Turn_Cycle.Max_Calls) of Port.Ask_Status;

   type Prompt_Text is access String;

   type Prompt_Texts is array (1 .. Turn_Cycle.Max_Calls) of Prompt_Text;

   --  Answers the K-th question "answer K", or gives it the status the
   --  script holds; keeps every prompt
   type Scripted_Port (Why : Port.Reach) is limited new Port.Port with record
      Script  : Outcomes := [others => Port.Answered];
      Asked   : Natural := 0;
      Prompts : Prompt_Texts;
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
      pragma Unreferenced (System_Prompt, Max_Tokens, Deadline);
   begin
      Self.Asked := Self.Asked + 1;
      Self.Prompts (Self.Asked) := Prompt_Text'(new String'(Prompt));
      Port.Clear (Facts);
      Facts.Status := Self.Script (Self.Asked);
      Port.Set_Model (Facts, "scripted");
      if Facts.Status = Port.Answered then
         Organs.Texts.Add (Answer, "answer" & Self.Asked'Image);
      else
         Port.Set_Error (Facts, "scripted failure");
      end if;
   end Ask;

   Sampled : aliased constant Organs.Model_Cognition.Organ :=
     (Fallback => Test_Organs.Stub_Set.Cognition, Timeout_Ms => 1000, Max_Tokens => 64);

   function Sampling_Set return Organs.Sets.Organ_Set is
     ((Test_Organs.Stub_Set with delta Cognition => Sampled'Access));

   function Contains (Text, Part : String) return Boolean is
     (Ada.Strings.Fixed.Index (Text, Part) > 0);

   function Detail (Trace : Turn_Cycle.Turn_Trace; Step : Cycle_Order.Step_Index) return String is
     (Turn_Cycle.Text_Of (Trace, Trace.Steps (Step).Detail));

   function Reasoning_Step (Pass : Positive) return Cycle_Order.Step_Index is
     (Cycle_Order.Step_Index (2 + 2 * Pass));

   procedure Turn
     (Chosen : Organs.Sets.Organ_Set; Table : in out Session_Table.Table;
      Through : in out Port.Port'Class; Trace : out Turn_Cycle.Turn_Trace)
   is
      Session : Session_Table.Session_Access;
      Memory  : Session_Table.Memory_Access;
   begin
      Table.Open (Chosen, Session_Keys.Key_Of ("u", "c", "s"), Session, Memory);
      Turn_Cycle.Run (Chosen, Test_Organs.Stub_Curve, Session.all, Memory.all, "u", "c", "s",
                      "who sits at the head of the table?", Through, Trace);
   end Turn;

   --  Once per pass that ran and once for the synthesis; each answer after
   --  its move, the last one the output; each prompt quotes the draw and the
   --  thought before it
   procedure Test_One_Question_A_Pass (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Table   : Session_Table.Table;
      Through : Scripted_Port (Port.Reachable);
      Trace   : Turn_Cycle.Turn_Trace;
   begin
      for Round in 1 .. 3 loop
         Through.Asked := 0;
         Turn (Sampling_Set, Table, Through, Trace);
         Assert (Through.Asked = Trace.Passes + 1, "passes + 1 questions:" & Through.Asked'Image);
         Assert (Trace.Call_Last = Trace.Passes + 1, "a call recorded for each");
         for Pass in 1 .. Trace.Passes loop
            declare
               Move : constant String :=
                 Sampled.Move_Name ((if Pass <= 4 then Organs.Descent else Organs.Ascent),
                                    Organs.Quarter ((Pass - 1) mod 4 + 1));
               Step : constant Cycle_Order.Step_Index := Reasoning_Step (Pass);
            begin
               Assert (Detail (Trace, Step) = Move & ": answer" & Pass'Image, Detail (Trace, Step));
               Assert (Trace.Calls (Pass).Step = Step and then Trace.Calls (Pass).Call.Asked, "the call's step");
               Assert (Contains (Through.Prompts (Pass).all, "move: " & Move), "the move in the prompt");
               Assert (Contains (Through.Prompts (Pass).all, Detail (Trace, Step - 1)), "the draw in the prompt");
               if Pass > 1 then
                  Assert (Contains (Through.Prompts (Pass).all, Detail (Trace, Step - 2)),
                          "the previous thought in the prompt");
               end if;
            end;
         end loop;
         Assert (Turn_Cycle.Text_Of (Trace, Trace.Output) = "answer" & Natural'Image (Trace.Passes + 1),
                 "the synthesis is the output");
         Assert (Trace.Calls (Trace.Call_Last).Step = 22, "the synthesis call is step 22's");
      end loop;
      Assert (Trace.Passes < Energy_Gate.Pass_Total, "the session drained: fewer passes, fewer questions");
   end Test_One_Question_A_Pass;

   --  A failed pass says so in its thought and the turn goes on; a failed
   --  synthesis leaves the output of the moves
   procedure Test_Failures_Are_Marked (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Table   : Session_Table.Table;
      Through : Scripted_Port (Port.Reachable);
      Trace   : Turn_Cycle.Turn_Trace;
   begin
      Through.Script := [2 => Port.Timed_Out, 9 => Port.Failed, others => Port.Answered];
      Turn (Sampling_Set, Table, Through, Trace);
      Assert (Trace.Passes = 8, "a full first turn");
      Assert (Detail (Trace, 6) = "question: no thought (timed out: scripted failure)", Detail (Trace, 6));
      Assert (Detail (Trace, 8) = "decompose: answer 3", "the next pass asked as usual");
      Assert (Trace.Calls (2).Call.Facts.Status = Port.Timed_Out, "the call marked");
      Assert (Trace.Calls (9).Call.Facts.Status = Port.Failed, "the synthesis marked");
      Assert (Ada.Strings.Fixed.Head (Turn_Cycle.Text_Of (Trace, Trace.Output), 18) = "[knowledge.answer]",
              "the moves' output: " & Turn_Cycle.Text_Of (Trace, Trace.Output));
      Assert (not Turn_Cycle.Got_No_Thought (Trace), "some questions were answered");
   end Test_Failures_Are_Marked;

   --  A turn whose every question failed says that the model gave no
   --  thought, instead of the moves' output standing in for one
   procedure Test_No_Answer_Is_No_Thought (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Table   : Session_Table.Table;
      Through : Scripted_Port (Port.Reachable);
      Trace   : Turn_Cycle.Turn_Trace;
   begin
      Through.Script := [1 => Port.Timed_Out, others => Port.Failed];
      Turn (Sampling_Set, Table, Through, Trace);
      Assert (Turn_Cycle.Got_No_Thought (Trace), "no question answered");
      Assert (Turn_Cycle.Text_Of (Trace, Trace.Output)
              = "[knowledge.answer] No thought: the model answered none of the 9 questions of this turn"
                & " (the first: timed_out: scripted failure).",
              Turn_Cycle.Text_Of (Trace, Trace.Output));
   end Test_No_Answer_Is_No_Thought;

   --  With no model to reach, the organ is the stub's, byte for byte, and
   --  asks nothing
   procedure Test_Unreachable_Is_The_Stub (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Sampled_Table, Stub_Table : Session_Table.Table;
      Through : Scripted_Port (Port.No_Capability);
      Nowhere : Port.Unreachable (Port.No_Capability);
      Sampled_Trace, Stub_Trace : Turn_Cycle.Turn_Trace;
   begin
      for Round in 1 .. 2 loop
         Turn (Sampling_Set, Sampled_Table, Through, Sampled_Trace);
         Turn (Test_Organs.Stub_Set, Stub_Table, Nowhere, Stub_Trace);
         Assert (Through.Asked = 0, "nothing asked");
         Assert (Turn_Cycle.Text_Of (Sampled_Trace, Sampled_Trace.Output)
                 = Turn_Cycle.Text_Of (Stub_Trace, Stub_Trace.Output), "the stub's output");
         for Step in Cycle_Order.Step_Index loop
            if Turn_Cycle.Runs (Step, Stub_Trace.Passes) then
               Assert (Detail (Sampled_Trace, Step) = Detail (Stub_Trace, Step), "step" & Step'Image);
            end if;
         end loop;
         Assert ((for all Index in 1 .. Sampled_Trace.Call_Last => not Sampled_Trace.Calls (Index).Call.Asked),
                 "no call asked");
         Assert (Sampled_Trace.Reach = Port.No_Capability, "the reason kept in the trace");
      end loop;
   end Test_Unreachable_Is_The_Stub;

   --  The port that never asks says why, and never leaves its part empty of
   --  an error
   procedure Test_The_Unreachable_Port (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Nowhere : Port.Unreachable (Port.No_Capability);
      Store   : Organs.Texts.Store (64);
      Facts   : Port.Answer_Facts;
      Part    : Organs.Texts.Part;
   begin
      Organs.Texts.Start_Part (Store, 32);
      Nowhere.Ask ("s", "p", 1, Monotonic.Now, Store, Facts);
      Organs.Texts.End_Part (Store, Part);
      Assert (Facts.Status = Port.Failed and then Port.Error_Of (Facts) = "no model to ask", "failed, saying why");
      Assert (Organs.Texts.Is_Empty (Part), "no answer text");
      Port.Set_Error (Facts, [1 .. 400 => 'e']);
      Assert (Facts.Error_Last = Port.Max_Error_Bytes, "an error cut to its bound");
   end Test_The_Unreachable_Port;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_One_Question_A_Pass'Access, "model cognition: one question a pass and one more");
      Register_Routine (T, Test_Failures_Are_Marked'Access, "model cognition: failed questions are marked");
      Register_Routine (T, Test_No_Answer_Is_No_Thought'Access, "model cognition: no answer is no thought");
      Register_Routine (T, Test_Unreachable_Is_The_Stub'Access, "model cognition: unreachable is the stub");
      Register_Routine (T, Test_The_Unreachable_Port'Access, "model cognition: the port that never asks");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Organs.Model_Cognition");
   end Name;

end Model_Cognition_Tests;
