with Input_Guard;
with Organs.Celtic_Cross;
with Organs.Cognition;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Morag;
with Organs.Router;

package body Turn_Cycle is

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

   function Way_Of (Pass : Energy_Gate.Pass_Index) return Organs.Direction is
     (if Pass <= 4 then Organs.Descent else Organs.Ascent);

   function Rank_Of (Pass : Energy_Gate.Pass_Index) return Organs.Quarter is
     (Organs.Quarter ((Natural (Pass) - 1) mod 4 + 1));

   procedure Run
     (Stub                 : Organs.Fixture;
      Session              : in out Session_Table.Session;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Trace)
   is
      Focus     : constant String := Focus_Of (Input);
      Recalled  : Span;
      Last_Draw : Span;
      Thought   : Span;
      Stated    : Organs.Intender.Stated_Intent;

      --  Each text is written straight into the trace's Texts, piece by
      --  piece.  The store has room for everything a turn says, by
      --  construction (see Text_Capacity).

      Texts : Json_Text.Text_Store renames Trace.Texts;

      procedure Add (Piece : String) with Inline is
      begin
         Json_Text.Add (Texts, Piece);
      end Add;

      procedure Add (Part : Span) with Inline is
      begin
         Json_Text.Add_Kept (Texts, Part);
      end Add;

      procedure Add_Image (Value : Natural) with Inline is
      begin
         Json_Text.Add_Image (Texts, Value);
      end Add_Image;

      procedure Keep_Fraction (Value : Organs.Millis; Part : out Span) is
      begin
         Json_Text.Start_Part (Texts);
         Json_Text.Add_Fraction (Texts, Value);
         Json_Text.End_Part (Texts, Part);
      end Keep_Fraction;

      --  The text just written is Step's detail
      procedure Record_Step (Step : Cycle_Order.Step_Index) is
         Detail : Span;
      begin
         Json_Text.End_Part (Texts, Detail);
         Trace.Steps (Step) := (Status => Ran, Detail => Detail);
      end Record_Step;

      procedure Record_Step (Step : Cycle_Order.Step_Index; Detail : Span) is
      begin
         Trace.Steps (Step) := (Status => Ran, Detail => Detail);
      end Record_Step;

      function Is_Empty (Part : Span) return Boolean
        renames Json_Text.Is_Empty;

   begin
      Json_Text.Clear (Texts);
      Trace.Steps := [others => (Status => Skipped, Detail => <>)];
      for Step in Cycle_Order.Step_Index loop
         case Cycle_Order.Phase (Step) is
            when Cycle_Order.Scope =>
               Session.Turns := Session.Turns + 1;
               if Session.Turns > 1 then
                  Organs.Drive_Box.Recharge (Session.Reservoir, Stub);
               end if;
               Trace.Turn := Session.Turns;
               Json_Text.Start_Part (Texts);
               Add_Image (Session.Turns);
               Json_Text.End_Part (Texts, Trace.Turn_Text);
               Json_Text.Keep (Texts, Uid, Trace.Uid);
               Json_Text.Keep (Texts, Channel, Trace.Channel);
               Json_Text.Keep (Texts, Server, Trace.Server);
               Json_Text.Start_Part (Texts);
               Add ("session ");
               Add (Trace.Uid);
               Add ("/");
               Add (Trace.Channel);
               Add ("/");
               Add (Trace.Server);
               Add (", turn ");
               Add (Trace.Turn_Text);
               Record_Step (Step);

            when Cycle_Order.Sense =>
               Trace.Energy := Organs.Drive_Box.Energy (Session.Reservoir);
               Trace.Passes := Energy_Gate.Passes_For (Stub.Curve, Trace.Energy);
               Keep_Fraction (Trace.Energy, Trace.Energy_Text);
               Json_Text.Keep
                 (Texts, Organs.Morag.Recall (Session.Memory, Input), Recalled);
               Json_Text.Start_Part (Texts);
               Add ("energy ");
               Add (Trace.Energy_Text);
               Add (" (");
               Add (Organs.Drive_Box.Terrain (Session.Reservoir));
               Add ("), ");
               Add_Image (Trace.Passes);
               Add (" of 8 passes; recall: ");
               if Is_Empty (Recalled) then
                  Add ("nothing");
               else
                  Add ("'");
                  Add (Recalled);
                  Add ("'");
               end if;
               Record_Step (Step);

            when Cycle_Order.Pass_Phase =>
               declare
                  Pass : constant Energy_Gate.Pass_Index :=
                    Cycle_Order.Pass_Of (Step);
               begin
                  if Natural (Pass) <= Trace.Passes then
                     Json_Text.Start_Part (Texts);
                     if Cycle_Order.Phase (Step) = Cycle_Order.Draw then
                        declare
                           Drawn : Organs.Celtic_Cross.Draw;
                        begin
                           Organs.Celtic_Cross.Next
                             (Session.Draws, Stub, Drawn);
                           Organs.Celtic_Cross.Describe
                             (Stub, Drawn, Pass, Texts);
                           Json_Text.End_Part (Texts, Last_Draw);
                           Record_Step (Step, Last_Draw);
                        end;
                     else
                        Organs.Cognition.Reason
                          (Stub, Way_Of (Pass), Rank_Of (Pass), Focus,
                           Last_Draw, Texts);
                        Json_Text.End_Part (Texts, Thought);
                        Record_Step (Step, Thought);
                     end if;
                  end if;
               end;

            when Cycle_Order.Pack =>
               Json_Text.Start_Part (Texts);
               Add ("packed schema ");
               Add (Organs.Mini_Rag.Packed_Schema);
               Record_Step (Step);

            when Cycle_Order.Intend =>
               Stated := Organs.Intender.Intent_Of (Stub, Input);
               Trace.Intent := Stated.Intent;
               Json_Text.Keep
                 (Texts, Organs.Intent_Name (Stated.Intent), Trace.Intent_Name);
               Json_Text.Start_Part (Texts);
               Add ("intent ");
               Add (Trace.Intent_Name);
               if Stated.Rule = 0 then
                  Add (" (fixture default)");
               else
                  Add (" (fixture rule ");
                  Add_Image (Stated.Rule);
                  Add (")");
               end if;
               Record_Step (Step);

            when Cycle_Order.Route =>
               Json_Text.Keep
                 (Texts, Organs.Router.Route_Of (Trace.Intent), Trace.Route);
               Json_Text.Start_Part (Texts);
               Add (Trace.Intent_Name);
               Add (" -> ");
               Add (Trace.Route);
               Add (" (static Ada table)");
               Record_Step (Step);

            when Cycle_Order.Synthesize =>
               Json_Text.Start_Part (Texts);
               Add ("[");
               Add (Trace.Route);
               Add ("] On '");
               Add (Focus);
               Add ("': ");
               --  The moves of the passes that ran (each pass's thought ran
               --  with it), in order, each after a comma once the list has
               --  text
               declare
                  Listed : Boolean := False;
               begin
                  for Pass in 1 .. Energy_Gate.Pass_Index (Trace.Passes) loop
                     declare
                        Move : String renames Organs.Cognition.Move_Name
                          (Stub, Way_Of (Pass), Rank_Of (Pass)).all;
                     begin
                        if Listed then
                           Add (", ");
                        end if;
                        Add (Move);
                        Listed := Listed or else Move'Length > 0;
                     end;
                  end loop;
               end;
               Add (" (");
               Add_Image (Trace.Passes);
               Add ("/8 passes)");
               if not Is_Empty (Recalled) then
                  Add ("; recalled '");
                  Add (Recalled);
                  Add ("'");
               end if;
               Add (".");
               Json_Text.End_Part (Texts, Trace.Output);
               Json_Text.Start_Part (Texts);
               Add ("output of ");
               Add_Image (Json_Text.Length (Trace.Output));
               Add (" bytes from ");
               Add_Image (Trace.Passes);
               Add (" passes and route ");
               Add (Trace.Route);
               Record_Step (Step);

            when Cycle_Order.Cohere =>
               declare
                  Check : constant Organs.Cognition.Coherence :=
                    Organs.Cognition.Cohere
                      (Text_Of (Trace, Trace.Output),
                       Text_Of (Trace, Thought));
               begin
                  Trace.Coherence := Check.Score;
                  Trace.Drift := Check.Drift;
                  Keep_Fraction (Check.Score, Trace.Coherence_Text);
                  Keep_Fraction (Check.Drift, Trace.Drift_Text);
                  Json_Text.Start_Part (Texts);
                  Add ("score ");
                  Add (Trace.Coherence_Text);
                  Add (", drift ");
                  Add (Trace.Drift_Text);
                  Add (" (reported, never fed back)");
                  Record_Step (Step);
               end;
         end case;
      end loop;

      --  The turn is over: charge the passes and keep its memory, for this
      --  session's next turns only.
      Organs.Drive_Box.Spend (Session.Reservoir, Stub, Trace.Passes);
      Organs.Morag.Remember (Session.Memory, Stub, Input);
      Json_Text.Seal (Texts);
   end Run;

end Turn_Cycle;
