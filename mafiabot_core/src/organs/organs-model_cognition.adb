with Energy_Gate;
with Monotonic;

package body Organs.Model_Cognition is

   use type Organs.Model_Port.Reach;
   use type Organs.Model_Port.Ask_Status;

   package Texts renames Organs.Texts;

   function Quoted_Input (Input : String) return String
     renames Organs.Model_Port.Quoted_Input;

   function Or_Else (Text, Instead : String) return String is
     (if Text = "" then Instead else Text);

   function Status_Word (Status : Organs.Model_Port.Ask_Status) return String
   is (case Status is
          when Organs.Model_Port.Answered => "answered",
          when Organs.Model_Port.Failed => "failed",
          when Organs.Model_Port.Timed_Out => "timed out",
          when Organs.Model_Port.Cancelled => "cancelled");

   function Pass_Prompt
     (Move, Draw, Recall, Previous, Input : String;
      Pass : Positive; Way : Direction) return String is
     ("Pass" & Pass'Image & " of 8 ("
      & (if Way = Descent then "descent" else "ascent") & "), move: "
      & Move & "." & ASCII.LF
      & "Card drawn: " & Draw & "." & ASCII.LF
      & "Recalled from this session: " & Or_Else (Recall, "nothing") & "."
      & ASCII.LF
      & "Previous pass's thought: "
      & Or_Else (Previous, "none (this is the first pass)") & ASCII.LF
      & "The user's turn: " & Quoted_Input (Input) & ASCII.LF
      & "Think this pass's move about the turn.");

   overriding function Move_Name
     (Self : Organ; Way : Direction; Rank : Quarter) return String is
     (Self.Fallback.Move_Name (Way, Rank));

   function Deadline_Of (Self : Organ) return Monotonic.Instant is
     (Monotonic.After (Self.Timeout_Ms));

   overriding procedure Reason
     (Self    : Organ;
      Pass    : Organs.Cognition.Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Organs.Texts.Store;
      Call    : out Organs.Cognition.Call_Record) is
   begin
      if Port.Reach_Of /= Organs.Model_Port.Reachable then
         Self.Fallback.Reason (Pass, Input, Focus, Port, Thought, Call);
         return;
      end if;
      declare
         Move   : constant String := Self.Move_Name (Pass.Way, Pass.Rank);
         Prompt : constant String :=
           Pass_Prompt
             (Move     => Move,
              Draw     => Texts.Text_Of (Thought, Pass.Draw),
              Recall   => Texts.Text_Of (Thought, Pass.Recall),
              Previous => Texts.Text_Of (Thought, Pass.Previous),
              Input    => Input,
              Pass     => Positive (Pass.Pass),
              Way      => Pass.Way);
      begin
         Call.Asked := True;
         Texts.Add_Within (Thought, Move, Max_Name_Bytes);
         Texts.Add (Thought, ": ");
         Port.Ask (System_Prompt, Prompt, Self.Max_Tokens, Deadline_Of (Self),
                   Thought, Call.Facts);
         if Call.Facts.Status /= Organs.Model_Port.Answered then
            Texts.Add (Thought, "no thought (");
            Texts.Add (Thought, Status_Word (Call.Facts.Status));
            Texts.Add (Thought, ": ");
            Texts.Add (Thought, Organs.Model_Port.Error_Of (Call.Facts));
            Texts.Add (Thought, ")");
         end if;
      end;
   end Reason;

   overriding procedure Synthesize
     (Self   : Organ;
      Given  : Organs.Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Organs.Texts.Store;
      Call   : out Organs.Cognition.Call_Record) is
   begin
      if Port.Reach_Of /= Organs.Model_Port.Reachable then
         Self.Fallback.Synthesize (Given, Input, Port, Output, Call);
         return;
      end if;
      declare
         function Thoughts (From : Positive) return String is
           (if From > Given.Passes then ""
            else "- "
                 & Texts.Text_Of
                     (Output, Given.Thoughts (Energy_Gate.Pass_Index (From)))
                 & ASCII.LF & Thoughts (From + 1));

         Prompt : constant String :=
           "The user's turn: " & Quoted_Input (Input) & ASCII.LF
           & "Route (chosen by the body's static table): "
           & Texts.Text_Of (Output, Given.Route) & ASCII.LF
           & "Recalled from this session: "
           & Or_Else (Texts.Text_Of (Output, Given.Recall), "nothing") & "."
           & ASCII.LF
           & "The thoughts of the" & Given.Passes'Image & " passes that ran:"
           & ASCII.LF & Thoughts (1)
           & "Write the reply to the user's turn from these thoughts.";
      begin
         Call.Asked := True;
         Port.Ask (System_Prompt, Prompt, Self.Max_Tokens, Deadline_Of (Self),
                   Output, Call.Facts);
      end;
   end Synthesize;

end Organs.Model_Cognition;
