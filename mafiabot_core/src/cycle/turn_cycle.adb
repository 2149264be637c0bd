with Utf8;
with Organs.Celtic_Cross;

package body Turn_Cycle is

   use type Cycle_Order.Phase_Kind;
   use type Energy_Gate.Pass_Index;
   use type Organs.Model_Port.Reach;

   --  A + B, held at Natural'Last - 1 (a client may report any count)
   function Capped_Sum (A, B : Natural) return Natural is
     (Natural (Long_Long_Integer'Min
                 (Long_Long_Integer (Natural'Last - 1),
                  Long_Long_Integer (A) + Long_Long_Integer (B))));

   package Texts renames Organs.Texts;

   function Focus_Of (Input : String) return String is
      Kept : constant Natural :=
        Utf8.Prefix_Length (Input, Focus_Bytes);
   begin
      return Input (Input'First .. Input'First + Kept - 1)
        & (if Kept < Input'Length then "..." else "");
   end Focus_Of;

   function Way_Of (Pass : Energy_Gate.Pass_Index) return Organs.Direction is
     (if Pass <= 4 then Organs.Descent else Organs.Ascent);

   function Rank_Of (Pass : Energy_Gate.Pass_Index) return Organs.Quarter is
     (Organs.Quarter ((Natural (Pass) - 1) mod 4 + 1));

   procedure Run
     (Chosen               : Organs.Sets.Organ_Set;
      Curve                : Energy_Gate.Threshold_Curve;
      Session              : in out Session_Table.Session;
      Memory               : in out Organs.Morag.Memory'Class;
      Uid, Channel, Server : String;
      Input                : String;
      Trace                : out Turn_Trace)
   is
      Nowhere : Organs.Model_Port.Unreachable (Organs.Model_Port.No_Capability);
   begin
      Run (Chosen, Curve, Session, Memory, Uid, Channel, Server, Input, Nowhere,
           Trace);
   end Run;

   procedure Remember
     (Chosen : Organs.Sets.Organ_Set;
      Memory : in out Organs.Morag.Memory'Class;
      Turn   : Positive;
      Input  : String) is
   begin
      if Memory.Count = 0 or else Memory.Turn_Of (Memory.Count) < Turn then
         Chosen.Morag.Remember (Memory, Turn, Input);
      end if;
   end Remember;

   procedure Run
     (Chosen               : Organs.Sets.Organ_Set;
      Curve                : Energy_Gate.Threshold_Curve;
      Session              : in out Session_Table.Session;
      Memory               : in out Organs.Morag.Memory'Class;
      Uid, Channel, Server : String;
      Input                : String;
      Port                 : in out Organs.Model_Port.Port'Class;
      Trace                : out Turn_Trace;
      Remembering          : Boolean := True)
   is
      Focus     : constant String := Focus_Of (Input);
      Recalled  : Span;
      Unrecalled : Boolean := False;
      --  The memory could not be read: the turn went on without a recall
      Last_Draw : Span;
      Thought   : Span;
      Thoughts  : Organs.Cognition.Thought_Parts := [others => (others => <>)];
      Schema    : Span;

      --  Budget: a session whose budget cannot pay for the cheapest turn
      --  that asks asks nothing; its one pass is the stub's, said so
      Drained   : aliased Organs.Model_Port.Unreachable
                            (Organs.Model_Port.Budget_Spent);
      Asking    : access Organs.Model_Port.Port'Class := Port'Access;

      Pack_Lead : constant String := "packed schema ";

      --  Each text is written straight into the trace's Texts, piece by
      --  piece, each part within its bound (see Text_Capacity).
      Store : Texts.Store renames Trace.Texts;

      procedure Add (Piece : String) with Inline is
      begin
         Texts.Add (Store, Piece);
      end Add;

      procedure Add (Part : Span) with Inline is
      begin
         Texts.Add_Kept (Store, Part);
      end Add;

      --  A name an organ gave, held to the bound the organs promise
      procedure Add_Name (Name : String) with Inline is
      begin
         Texts.Add_Within (Store, Name, Name_Bytes);
      end Add_Name;

      --  The text just written is Step's detail
      procedure Record_Step (Step : Cycle_Order.Step_Index) is
         Detail : Span;
      begin
         Texts.End_Part (Store, Detail);
         Trace.Steps (Step) := (Status => Ran, Detail => Detail);
      end Record_Step;

      procedure Record_Step (Step : Cycle_Order.Step_Index; Detail : Span) is
      begin
         Trace.Steps (Step) := (Status => Ran, Detail => Detail);
      end Record_Step;

      function Is_Empty (Part : Span) return Boolean renames Texts.Is_Empty;

      --  "[route] On 'focus': move, ..., move (P/8 passes); recalled 'R'."
      procedure Write_Moves_Output is
      begin
         Texts.Start_Part (Store, Output_Bytes);
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
                  Move : constant String :=
                    Chosen.Cognition.Move_Name (Way_Of (Pass), Rank_Of (Pass));
               begin
                  if Listed then
                     Add (", ");
                  end if;
                  Add_Name (Move);
                  Listed := Listed or else Move'Length > 0;
               end;
            end loop;
         end;
         Add (" (");
         Texts.Add_Image (Store, Trace.Passes);
         Add ("/8 passes)");
         if not Is_Empty (Recalled) then
            Add ("; recalled '");
            Add (Recalled);
            Add ("'");
         end if;
         Add (".");
         Texts.End_Part (Store, Trace.Output);
      end Write_Moves_Output;

      --  "[route] No thought: the model answered none of the N questions
      --  of this turn (the first: status: error)."
      procedure Write_No_Thought_Output is
         First : Organs.Model_Port.Answer_Facts renames
           Trace.Calls (1).Call.Facts;
      begin
         Texts.Start_Part (Store, Output_Bytes);
         Add ("[");
         Add (Trace.Route);
         Add ("] No thought: the model answered none of the ");
         Texts.Add_Image
           (Store, Trace.Call_Last - Boolean'Pos (Trace.Intent_Asked));
         Add (" questions of this turn (the first: ");
         Add (Organs.Model_Port.Status_Name (First.Status));
         if Organs.Model_Port.Error_Of (First) /= "" then
            Add (": ");
            Add (Organs.Model_Port.Error_Of (First));
         end if;
         Add (").");
         Texts.End_Part (Store, Trace.Output);
      end Write_No_Thought_Output;

      --  The next call of the trace, Step's: the cognition writes what came
      --  of it there, in place (a call record is some 300 bytes)
      procedure Next_Call (Step : Cycle_Order.Step_Index) with Inline is
      begin
         Trace.Call_Last := Trace.Call_Last + 1;
         Trace.Calls (Trace.Call_Last).Step := Step;
      end Next_Call;
   begin
      Texts.Clear (Store);
      Trace.Reach := Port.Reach_Of;
      Trace.Call_Last := 0;
      Trace.Steps := [others => (Status => Skipped, Detail => <>)];
      Trace.Output := (others => <>);
      Trace.Route := (others => <>);
      for Step in Cycle_Order.Step_Index loop
         case Cycle_Order.Phase (Step) is
            when Cycle_Order.Scope =>
               --  A session at the last turn number stays there: its turns
               --  go on, numbered alike
               Session.Turns := Natural'Min (Session.Turns, Natural'Last - 1)
                                + 1;
               if Session.Turns > 1 then
                  Chosen.Drive_Box.Recharge (Session.Reservoir);
               end if;
               Trace.Turn := Session.Turns;
               Texts.Keep (Store, Uid, Key_Part_Bytes, Trace.Uid);
               Texts.Keep (Store, Channel, Key_Part_Bytes, Trace.Channel);
               Texts.Keep (Store, Server, Key_Part_Bytes, Trace.Server);
               Texts.Start_Part (Store, Scope_Bytes);
               Add ("session ");
               Add (Trace.Uid);
               Add ("/");
               Add (Trace.Channel);
               Add ("/");
               Add (Trace.Server);
               Add (", turn ");
               Texts.Add_Image (Store, Trace.Turn);
               Record_Step (Step);

            when Cycle_Order.Sense =>
               declare
                  Now : constant Organs.Drive_Box.Snapshot :=
                    Chosen.Drive_Box.Snapshot_Of (Session.Reservoir);
               begin
                  Trace.Energy := Now.Energy;
                  Trace.Terrain := Now.Terrain;
                  Trace.Budget := Now.Budget;
                  Trace.Calls_Left := Now.Calls_Left;
               end;
               --  A Drive-Box that meters no calls leaves the gate's passes
               --  as they are; a metered one cuts them to the calls left,
               --  the intent's counted when the model states it
               if Trace.Calls_Left = Organs.Drive_Box.Unmetered then
                  Trace.Passes := Energy_Gate.Passes_For
                    (Curve, Organs.To_Millis (Trace.Energy));
               else
                  Trace.Passes := Energy_Gate.Passes_Within
                    (Curve, Organs.To_Millis (Trace.Energy),
                     Trace.Calls_Left,
                     Asks_Intent => Chosen.Intender.Asks_Model);
               end if;
               if not Energy_Gate.Can_Ask
                   (Trace.Calls_Left,
                    Asks_Intent => Chosen.Intender.Asks_Model)
                 and then Trace.Reach = Organs.Model_Port.Reachable
               then
                  Asking := Drained'Access;
                  Trace.Reach := Organs.Model_Port.Budget_Spent;
               end if;
               declare
                  use type Organs.Morag.Recall_Status;
                  Given : constant Organs.Morag.Recall_Result :=
                    Chosen.Morag.Recall (Memory, Input);
               begin
                  Texts.Keep (Store, Given.Text, Recall_Bytes, Recalled);
                  Trace.Recall_Hits := Given.Hits;
                  Trace.Recall_Hit_Last := Given.Hit_Last;
                  Unrecalled := Given.Status = Organs.Morag.Unavailable;
               end;
               Texts.Start_Part (Store, Sense_Bytes);
               Add ("energy ");
               Texts.Add_Fraction (Store, Trace.Energy);
               Add (" (");
               Add (Organs.Drive_Box.Terrain_Name (Trace.Terrain));
               Add ("), ");
               Texts.Add_Image (Store, Trace.Passes);
               Add (" of 8 passes");
               if Trace.Budget.Metered then
                  Add ("; budget: ");
                  Texts.Add_Image
                    (Store, Natural'Min (Trace.Calls_Left, 999_999_999));
                  Add (" of ");
                  Texts.Add_Image (Store, Trace.Budget.Calls_Limit);
                  Add (" calls left in ");
                  Texts.Add_Image (Store, Trace.Budget.Window_S);
                  Add (" s");
                  if Trace.Reach = Organs.Model_Port.Budget_Spent then
                     Add (", spent: no model call");
                  end if;
               end if;
               Add ("; recall: ");
               if Unrecalled then
                  Add ("unavailable (the memory could not be read)");
               elsif Is_Empty (Recalled) then
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
                     if Cycle_Order.Phase (Step) = Cycle_Order.Draw then
                        declare
                           Drawn : Organs.Celtic_Cross.Draw;
                        begin
                           Chosen.Celtic_Cross.Next
                             (Chosen.Deck.all, Session.Draws, Drawn);
                           Texts.Start_Part (Store, Draw_Bytes);
                           Add_Name (Chosen.Deck.Name (Drawn.Card));
                           if Drawn.Reversed then
                              Add (", reversed");
                           end if;
                           Add (", in ");
                           Add_Name
                             (Chosen.Celtic_Cross.Position_Name (Pass));
                           Texts.End_Part (Store, Last_Draw);
                           Record_Step (Step, Last_Draw);
                        end;
                     else
                        Next_Call (Step);
                        Texts.Start_Part (Store, Thought_Bytes);
                        Chosen.Cognition.Reason
                          ((Pass     => Pass,
                            Way      => Way_Of (Pass),
                            Rank     => Rank_Of (Pass),
                            Draw     => Last_Draw,
                            Recall   => Recalled,
                            Previous => Thought),
                           Input, Focus, Asking.all, Store,
                           Trace.Calls (Trace.Call_Last).Call);
                        Texts.End_Part (Store, Thought);
                        Thoughts (Pass) := Thought;
                        Record_Step (Step, Thought);
                     end if;
                  end if;
               end;

            when Cycle_Order.Pack =>
               Texts.Start_Part (Store, Pack_Bytes);
               Add (Pack_Lead);
               Texts.Add_Within
                 (Store, Chosen.Mini_Rag.Packed_Schema (Input),
                  Organs.Mini_Rag.Max_Schema_Bytes);
               Record_Step (Step);
               --  The schema is the detail past its lead
               Schema := (First => Trace.Steps (Step).Detail.First
                                   + Pack_Lead'Length,
                          Last  => Trace.Steps (Step).Detail.Last);

            when Cycle_Order.Intend =>
               declare
                  Basis   : Span;
                  Stated  : Organs.Intender.Statement;
                  Unasked : Organs.Model_Port.Call_Record;
                  --  The call of an intender that never asks the model
               begin
                  Trace.Intent_Asked := Chosen.Intender.Asks_Model;
                  Texts.Start_Part (Store, Organs.Intender.Max_Basis_Bytes);
                  if Trace.Intent_Asked then
                     Next_Call (Step);
                     Chosen.Intender.State_Intent
                       (Input, Text_Of (Trace, Schema), Asking.all, Stated,
                        Store, Trace.Calls (Trace.Call_Last).Call);
                  else
                     Chosen.Intender.State_Intent
                       (Input, Text_Of (Trace, Schema), Asking.all, Stated,
                        Store, Unasked);
                  end if;
                  Texts.End_Part (Store, Basis);
                  Trace.Intent := Stated.Intent;
                  Trace.Intent_Source := Stated.Source;
                  Trace.Intent_Fallback := Stated.Fallback;
                  if Stated.Said_Last > 0 then
                     Texts.Keep
                       (Store, Organs.Intender.Said_Of (Stated),
                        Organs.Intender.Max_Said_Bytes, Trace.Intent_Said);
                  else
                     Trace.Intent_Said := (others => <>);
                  end if;
                  Texts.Start_Part (Store, Intend_Bytes);
                  Add ("intent ");
                  Add (Organs.Intent_Name (Trace.Intent));
                  Add (" (");
                  Add (Basis);
                  Add (")");
                  Record_Step (Step);
               end;

            when Cycle_Order.Route =>
               Texts.Keep
                 (Store, Organs.Router.Route_Of (Trace.Intent), Route_Bytes,
                  Trace.Route);
               Texts.Start_Part (Store, Route_Step_Bytes);
               Add (Organs.Intent_Name (Trace.Intent));
               Add (" -> ");
               Add (Trace.Route);
               Add (" (static Ada table)");
               Record_Step (Step);

            when Cycle_Order.Synthesize =>
               --  The cognition's own synthesis, if it has one; else the
               --  output of the moves that ran
               Next_Call (Step);
               Texts.Start_Part (Store, Sampled_Output_Bytes);
               Chosen.Cognition.Synthesize
                 ((Passes   => Trace.Passes,
                   Thoughts => Thoughts,
                   Recall   => Recalled,
                   Route    => Trace.Route),
                  Input, Asking.all, Store,
                  Trace.Calls (Trace.Call_Last).Call);
               Texts.End_Part (Store, Trace.Output);
               if Is_Empty (Trace.Output) and then Got_No_Thought (Trace)
               then
                  Write_No_Thought_Output;
               elsif Is_Empty (Trace.Output) then
                  Write_Moves_Output;
               end if;
               Texts.Start_Part (Store, Synthesis_Bytes);
               Add ("output of ");
               Texts.Add_Image (Store, Texts.Length (Trace.Output));
               Add (" bytes from ");
               Texts.Add_Image (Store, Trace.Passes);
               Add (" passes and route ");
               Add (Trace.Route);
               Record_Step (Step);

            when Cycle_Order.Cohere =>
               declare
                  Check : Organs.Cognition.Coherence;

                  --  Cohere only reads the two texts: they are read where
                  --  they stand in the store, not copied
                  procedure Cohere_Kept (Bytes : String) is
                  begin
                     Check := Organs.Cognition.Cohere
                       (Bytes (Trace.Output.First .. Trace.Output.Last),
                        Bytes (Thought.First .. Thought.Last));
                  end Cohere_Kept;
               begin
                  Texts.Read (Store, Cohere_Kept'Access);
                  Trace.Coherence := Check.Score;
                  Trace.Drift := Check.Drift;
                  Texts.Start_Part (Store, Cohere_Bytes);
                  Add ("score ");
                  Texts.Add_Fraction (Store, Check.Score);
                  Add (", drift ");
                  Texts.Add_Fraction (Store, Check.Drift);
                  Add (" (reported, never fed back)");
                  Record_Step (Step);
               end;
         end case;
      end loop;

      --  The turn is over: charge the passes and keep its memory, for this
      --  session's next turns only.
      Trace.Used := (Calls => 0, Tokens => 0);
      for Index in 1 .. Trace.Call_Last loop
         declare
            Call : Organs.Cognition.Call_Record renames
              Trace.Calls (Index).Call;
         begin
            if Call.Asked then
               Trace.Used.Calls := Trace.Used.Calls + 1;
               if Call.Facts.Has_Tokens then
                  Trace.Used.Tokens :=
                    Capped_Sum (Trace.Used.Tokens, Call.Facts.Tokens);
               end if;
            end if;
         end;
      end loop;
      Chosen.Drive_Box.Spend (Session.Reservoir, Trace.Passes, Trace.Used);
      if Remembering then
         Remember (Chosen, Memory, Trace.Turn, Input);
      end if;
   end Run;

end Turn_Cycle;
