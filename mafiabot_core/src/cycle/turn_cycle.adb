with Ada.Strings.Unbounded;
with Input_Guard;
with Organs.Celtic_Cross;
with Organs.Cognition;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Morag;
with Organs.Router;
with Session_Keys;

package body Turn_Cycle is

   use Ada.Strings.Unbounded;

   use type Cycle_Order.Phase_Kind;
   use type Energy_Gate.Pass_Index;

   Focus_Bytes : constant := 48;
   --  How much of the input a thought quotes: enough to recognise it

   function Focus_Of (Input : String) return String is
      Kept : constant Natural :=
        Input_Guard.Utf8_Prefix_Length (Input, Focus_Bytes);
   begin
      return Input (Input'First .. Input'First + Kept - 1)
        & (if Kept < Input'Length then "..." else "");
   end Focus_Of;

   procedure Run
     (Stub        : Organs.Fixture;
      Session     : in out Session_Table.Session;
      Session_Key : String;
      Input       : String;
      Trace       : out Turn_Trace)
   is
      Focus     : constant String := Focus_Of (Input);
      Recalled  : Span;
      Last_Draw : Span;
      Thought   : Span;
      Moves     : Unbounded_String;
      Stated    : Organs.Intender.Stated_Intent;

      --  Keep Part in the trace's text.  The text has room for everything
      --  a turn says (see Text_Capacity); were it ever full, a part is cut
      --  at a character boundary rather than the turn failing.
      function Kept (Part : String) return Span is
         Room  : constant Natural := Json_Text.Room (Trace.Texts);
         Taken : constant Natural :=
           (if Part'Length <= Room then Part'Length
            else Input_Guard.Utf8_Prefix_Length (Part, Room));
      begin
         return Result : Span do
            Json_Text.Keep
              (Trace.Texts, Part (Part'First .. Part'First + Taken - 1),
               Result);
         end return;
      end Kept;

      function Text (Part : Span) return String is (Text_Of (Trace, Part));

      procedure Record_Step (Step : Cycle_Order.Step_Index; Detail : String) is
      begin
         Trace.Steps (Step) := (Status => Ran, Detail => Kept (Detail));
      end Record_Step;

      procedure Record_Step (Step : Cycle_Order.Step_Index; Detail : Span) is
      begin
         Trace.Steps (Step) := (Status => Ran, Detail => Detail);
      end Record_Step;

      function Is_Empty (Part : Span) return Boolean
        renames Json_Text.Is_Empty;

      function Pretty_Key return String is
      begin
         return Key : String := Session_Key do
            for C of Key loop
               if C = Session_Keys.Separator then
                  C := '/';
               end if;
            end loop;
         end return;
      end Pretty_Key;
   begin
      Json_Text.Clear (Trace.Texts);
      Trace.Steps := [others => (Status => Skipped, Detail => <>)];
      for Step in Cycle_Order.Step_Index loop
         case Cycle_Order.Phase (Step) is
            when Cycle_Order.Scope =>
               Session.Turns := Session.Turns + 1;
               if Session.Turns > 1 then
                  Organs.Drive_Box.Recharge (Session.Reservoir, Stub);
               end if;
               Trace.Turn := Session.Turns;
               Record_Step (Step, "session " & Pretty_Key & ", turn"
                            & Session.Turns'Image);

            when Cycle_Order.Sense =>
               Trace.Energy := Organs.Drive_Box.Energy (Session.Reservoir);
               Trace.Passes := Energy_Gate.Passes_For (Stub.Curve, Trace.Energy);
               Recalled := Kept (Organs.Morag.Recall (Session.Memory, Input));
               Record_Step
                 (Step, "energy " & Json_Text.Fraction_Image (Trace.Energy)
                  & " (" & Organs.Drive_Box.Terrain (Session.Reservoir)
                  & "), " & Trace.Passes'Image (2 .. Trace.Passes'Image'Last)
                  & " of 8 passes; recall: "
                  & (if Is_Empty (Recalled) then "nothing"
                     else "'" & Text (Recalled) & "'"));

            when Cycle_Order.Pass_Phase =>
               declare
                  Pass : constant Energy_Gate.Pass_Index :=
                    Cycle_Order.Pass_Of (Step);
               begin
                  if Natural (Pass) <= Trace.Passes then
                     if Cycle_Order.Phase (Step) = Cycle_Order.Draw then
                        declare
                           Drawn : Organs.Celtic_Cross.Draw;
                        begin
                           Organs.Celtic_Cross.Next
                             (Session.Draws, Stub, Drawn);
                           Last_Draw := Kept
                             (Organs.Celtic_Cross.Describe (Stub, Drawn, Pass));
                           Record_Step (Step, Last_Draw);
                        end;
                     else
                        declare
                           Way  : constant Organs.Direction :=
                             (if Pass <= 4 then Organs.Descent
                              else Organs.Ascent);
                           Rank : constant Organs.Quarter :=
                             Organs.Quarter ((Natural (Pass) - 1) mod 4 + 1);
                        begin
                           Thought := Kept
                             (Organs.Cognition.Reason
                                (Stub, Way, Rank, Focus, Text (Last_Draw)));
                           if Length (Moves) > 0 then
                              Append (Moves, ", ");
                           end if;
                           Append (Moves, Organs.Cognition.Move_Name
                                     (Stub, Way, Rank));
                           Record_Step (Step, Thought);
                        end;
                     end if;
                  end if;
               end;

            when Cycle_Order.Pack =>
               Record_Step (Step, "packed schema "
                            & Organs.Mini_Rag.Packed_Schema);

            when Cycle_Order.Intend =>
               Stated := Organs.Intender.Intent_Of (Stub, Input);
               Trace.Intent := Stated.Intent;
               Record_Step
                 (Step, "intent " & Organs.Intent_Name (Stated.Intent)
                  & (if Stated.Rule = 0 then " (fixture default)"
                     else " (fixture rule" & Stated.Rule'Image & ")"));

            when Cycle_Order.Route =>
               Trace.Route := Kept (Organs.Router.Route_Of (Trace.Intent));
               Record_Step (Step, Organs.Intent_Name (Trace.Intent) & " -> "
                            & Text (Trace.Route) & " (static Ada table)");

            when Cycle_Order.Synthesize =>
               Trace.Output := Kept
                 ("[" & Text (Trace.Route) & "] On '" & Focus & "': "
                  & To_String (Moves) & " ("
                  & Trace.Passes'Image (2 .. Trace.Passes'Image'Last)
                  & "/8 passes)"
                  & (if Is_Empty (Recalled) then ""
                     else "; recalled '" & Text (Recalled) & "'")
                  & ".");
               Record_Step (Step, "output of"
                            & Natural'Image (Text (Trace.Output)'Length)
                            & " bytes from" & Trace.Passes'Image
                            & " passes and route " & Text (Trace.Route));

            when Cycle_Order.Cohere =>
               declare
                  Check : constant Organs.Cognition.Coherence :=
                    Organs.Cognition.Cohere
                      (Text (Trace.Output), Text (Thought));
               begin
                  Trace.Coherence := Check.Score;
                  Trace.Drift := Check.Drift;
                  Record_Step
                    (Step, "score " & Json_Text.Fraction_Image (Check.Score)
                     & ", drift " & Json_Text.Fraction_Image (Check.Drift)
                     & " (reported, never fed back)");
               end;
         end case;
      end loop;

      --  The turn is over: charge the passes and keep its memory, for this
      --  session's next turns only.
      Organs.Drive_Box.Spend (Session.Reservoir, Stub, Trace.Passes);
      Organs.Morag.Remember (Session.Memory, Stub, Input);
      Json_Text.Seal (Trace.Texts);
   end Run;

end Turn_Cycle;
