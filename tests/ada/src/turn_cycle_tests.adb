with Ada.Strings.Fixed;
with AUnit.Assertions;
with Cycle_Order;
with Utf8;
with Organs;
with Organs.Celtic_Cross;
with Organs.Cognition;
with Organs.Deck;
with Organs.Drive_Box;
with Organs.Identity;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Model_Port;
with Organs.Morag;
with Organs.Morag.Excerpts;
with Organs.Sets;
with Organs.Texts;
with Session_Keys;
with Session_Table;
with Test_Organs;
with Turn_Cycle;

package body Turn_Cycle_Tests is

   use AUnit.Assertions;
   use type Cycle_Order.Step_Index;
   use type Organs.Fraction;
   use type Organs.Intent_Kind;
   use type Organs.Intender.Intent_Source;
   use type Organs.Deck.Card_Count;
   use type Organs.Celtic_Cross.Draw_State;
   use type Turn_Cycle.Step_Status;
   use type Organs.Drive_Box.Terrain_Kind;
   use type Cycle_Order.Phase_Kind;
   use type Organs.Identity.Big_Three;

   function Starts_With (Text, Head : String) return Boolean is
     (Text'Length >= Head'Length and then Text (Text'First .. Text'First + Head'Length - 1) = Head);

   function Ends_With (Text, Tail : String) return Boolean is
     (Text'Length >= Tail'Length and then Text (Text'Last - Tail'Length + 1 .. Text'Last) = Tail);

   function Detail (Trace : Turn_Cycle.Turn_Trace; Step : Cycle_Order.Step_Index) return String is
     (Turn_Cycle.Text_Of (Trace, Trace.Steps (Step).Detail));

   --  One turn of a fresh or kept session of Table, through Chosen
   procedure Turn
     (Chosen : Organs.Sets.Organ_Set; Table : in out Session_Table.Table; Uid, Input : String;
      Trace : out Turn_Cycle.Turn_Trace)
   is
      Session : Session_Table.Session_Access;
      Memory  : Session_Table.Memory_Access;
   begin
      Table.Open (Chosen, Session_Keys.Key_Of (Uid, "c", "s"), Session, Memory);
      Turn_Cycle.Run (Chosen, Test_Organs.Stub_Curve, Session.all, Memory.all, Uid, "c", "s", Input, Trace);
   end Turn;

   --  Each stub organ through its seam, as the cycle and the boot call it:
   --  what every spec promises, on the shipped fixture
   procedure Test_Each_Organ_Through_Its_Seam (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Chosen : constant Organs.Sets.Organ_Set := Test_Organs.Stub_Set;
      Deck   : Organs.Deck.Organ'Class renames Chosen.Deck.all;
   begin
      Assert (Deck.Size = 22 and then Deck.Name (1) = "The Fool" and then Deck.Name (22) = "The World",
              "the deck is the fixture's, in its order");
      declare
         Drawn : constant Organs.Identity.Big_Three := Chosen.Identity.Draw (Deck);
      begin
         Assert (Organs.Identity.Are_Distinct (Drawn) and then Organs.Identity.Are_Cards_Of (Drawn, Deck),
                 "the Big-3 are three distinct cards of the deck");
         Assert (Chosen.Identity.Draw (Deck) = Drawn, "and the same every time");
         Assert (Chosen.Identity.Role_Name (1) = "sun", "roles are the fixture's");
      end;
      declare
         use Organs.Celtic_Cross;
         A  : Draw_State := Chosen.Celtic_Cross.Shuffled_For ("alice");
         A2 : Draw_State := Chosen.Celtic_Cross.Shuffled_For ("alice");
         B  : Draw_State := Chosen.Celtic_Cross.Shuffled_For ("bob");
         From_A, From_A2, From_B : Draw;
         Differ : Boolean := False;
      begin
         Assert (A = A2 and then A /= B, "a session's draws start from its key alone");
         for Pass in 1 .. 40 loop
            Chosen.Celtic_Cross.Next (Deck, A, From_A);
            Chosen.Celtic_Cross.Next (Deck, A2, From_A2);
            Chosen.Celtic_Cross.Next (Deck, B, From_B);
            Assert (From_A = From_A2, "the same key draws the same cards");
            Assert (From_A.Card <= Deck.Size and then From_B.Card <= Deck.Size, "every card is the deck's");
            Differ := Differ or else From_A /= From_B;
         end loop;
         Assert (Differ, "two keys draw differently");
         Assert (Chosen.Celtic_Cross.Position_Name (2) = "challenge", "positions are the fixture's");
      end;
      declare
         use Organs.Drive_Box;
         Fresh : Reservoir := Chosen.Drive_Box.Fresh ("alice");
         Tired : constant Reservoir :=
           Chosen.Drive_Box.Fresh (Session_Keys.Key_Of ("demo-tired", "general", "demo"));
      begin
         Assert (Chosen.Drive_Box.Snapshot_Of (Fresh) = (Energy => 1.0, Terrain => Charged,
                                                     Calls_Left => Unmetered, Budget => <>), "a new session is full");
         Assert (Chosen.Drive_Box.Snapshot_Of (Tired) = (Energy => 0.3, Terrain => Low,
                                                     Calls_Left => Unmetered, Budget => <>), "a pinned one is pinned");
         Chosen.Drive_Box.Spend (Fresh, 8, (Calls => 9, Tokens => 0));
         Assert (Chosen.Drive_Box.Snapshot_Of (Fresh).Energy = 0.52, "eight passes cost 0.48");
         Chosen.Drive_Box.Recharge (Fresh);
         Assert (Chosen.Drive_Box.Snapshot_Of (Fresh) = (Energy => 0.62, Terrain => Steady,
                                                     Calls_Left => Unmetered, Budget => <>), "a turn recharges 0.1");
      end;
      declare
         Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      begin
         Assert (Chosen.Morag.Recall (Memory, "anything").Text = "", "an empty memory recalls nothing");
         Chosen.Morag.Remember (Memory, 1, "the moon rises");
         Chosen.Morag.Remember (Memory, 2, "a quiet tavern");
         Assert (Chosen.Morag.Recall (Memory, "where is the MOON?").Text = "the moon rises",
                 "the latest turn sharing a word is recalled");
         Assert (Chosen.Morag.Recall (Memory, "zzz").Text = "a quiet tavern", "else the latest turn");
         for Turn in 1 .. 5 loop
            Chosen.Morag.Remember (Memory, 2 + Turn, "turn" & Turn'Image);
         end loop;
         Assert (Memory.Count = 3, "the memory keeps the fixture's recall depth");
         Assert (Memory.Turn_Of (1) = 5 and then Memory.Turn_Of (3) = 7, "numbered by their turns");
      end;
      Assert (Chosen.Mini_Rag.Packed_Schema ("x") = Organs.Mini_Rag.Whole_Table
              and then Organs.Mini_Rag.Whole_Table
                       = "ask->knowledge.answer|act->tools.execute|remember->memory.store|chat->conversation.reply",
              "the stub packs the router's whole table");
      declare
         Store   : Organs.Texts.Store (64);
         Basis   : Organs.Texts.Part;
         Stated  : Organs.Intender.Statement;
         Nowhere : Organs.Model_Port.Unreachable (Organs.Model_Port.No_Capability);
         Call    : Organs.Model_Port.Call_Record;
      begin
         Organs.Texts.Start_Part (Store, Organs.Intender.Max_Basis_Bytes);
         Chosen.Intender.State_Intent
           ("Please run it", Organs.Mini_Rag.Whole_Table, Nowhere, Stated, Store, Call);
         Organs.Texts.End_Part (Store, Basis);
         Assert (Stated.Intent = Organs.Act and then Organs.Texts.Text_Of (Store, Basis) = "fixture rule 2",
                 "the intent and its basis: " & Organs.Texts.Text_Of (Store, Basis));
         Assert (Stated.Source = Organs.Intender.Rules and then not Call.Asked
                 and then not Chosen.Intender.Asks_Model, "the rules state it, asking nothing");
      end;
      Assert (Chosen.Cognition.Move_Name (Organs.Ascent, 4) = "commit", "moves are the fixture's");
   end Test_Each_Organ_Through_Its_Seam;

   --  The stub organs through the cycle: every step recorded, the details
   --  each organ's contract gives, the session's own history only
   procedure Test_The_Stubs_Through_The_Cycle (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Table  : Session_Table.Table;
      Trace  : Turn_Cycle.Turn_Trace;
   begin
      Turn (Test_Organs.Stub_Set, Table, "ana", "please remember the moon?", Trace);
      Assert (Turn_Cycle.Is_Complete (Trace) and then Trace.Turn = 1, "a complete first turn");
      Assert (Trace.Passes = 8 and then Trace.Energy = 1.0 and then Trace.Terrain = Organs.Drive_Box.Charged,
              "full energy runs every pass");
      Assert (Detail (Trace, 1) = "session ana/c/s, turn 1", "scope: " & Detail (Trace, 1));
      Assert (Detail (Trace, 2) = "energy 1.0 (charged), 8 of 8 passes; recall: nothing", "sense: " & Detail (Trace, 2));
      Assert (Detail (Trace, 20) = "intent remember (fixture rule 1)", "intend: " & Detail (Trace, 20));
      Assert (Trace.Intent = Organs.Remember and then Turn_Cycle.Text_Of (Trace, Trace.Route) = "memory.store",
              "routed by the static table");
      Assert (Starts_With (Detail (Trace, 19), "packed schema ask->knowledge.answer|"), "pack: " & Detail (Trace, 19));
      Assert (Trace.Coherence + Trace.Drift = 1.0, "coherence and drift add up");
      Assert (not Organs.Texts.Was_Cut (Trace.Texts), "the stubs stay within every bound");
      Turn (Test_Organs.Stub_Set, Table, "ana", "and the moon again", Trace);
      Assert (Trace.Turn = 2 and then Trace.Energy = 0.62, "the session's second turn, recharged after spending");
      Assert (Ends_With (Detail (Trace, 2), "recall: 'please remember the moon?'"), "recalls its own turn");
      Turn (Test_Organs.Stub_Set, Table, "bob", "and the moon again", Trace);
      Assert (Trace.Turn = 1 and then Ends_With (Detail (Trace, 2), "recall: nothing"), "another session recalls nothing");
   end Test_The_Stubs_Through_The_Cycle;

   --  A second implementation of three organs, written from their specs in
   --  the tests, runs through the cycle unchanged: the gate follows its
   --  energy, its long thoughts and basis are cut at their organs' bounds,
   --  visibly and between characters, and the trace is complete
   procedure Test_A_Second_Implementation (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Chosen : constant Organs.Sets.Organ_Set := Test_Organs.Second_Set (Energy => 500, Thought_Bytes => 20_000);
      Table  : Session_Table.Table;
      Trace  : Turn_Cycle.Turn_Trace;
      Mark   : constant String := Organs.Texts.Cut_Mark;
   begin
      for Round in 1 .. 2 loop
         Turn (Chosen, Table, "ana", "what now?", Trace);
         Assert (Turn_Cycle.Is_Complete (Trace) and then Trace.Turn = Round, "a complete turn");
         Assert (Trace.Energy = 0.5 and then Trace.Passes = 5, "half energy runs the curve's first five passes");
         Assert (Trace.Terrain = Organs.Drive_Box.Steady, "the terrain is the organ's");
         for Step in Cycle_Order.Step_Index loop
            Assert ((Trace.Steps (Step).Status = Turn_Cycle.Ran) = (Step not in 13 .. 18), "steps 13 .. 18 skipped");
            if Cycle_Order.Phase (Step) = Cycle_Order.Reason and then Step <= 12 then
               declare
                  Thought : constant String := Detail (Trace, Step);
               begin
                  Assert (Thought'Length <= Organs.Cognition.Max_Thought_Bytes
                          and then Thought'Length > Organs.Cognition.Max_Thought_Bytes - Mark'Length - 2,
                          "a thought is cut at its bound:" & Thought'Length'Image);
                  Assert (Ends_With (Thought, Mark), "visibly");
                  Assert (Utf8.Prefix_Length (Thought, Thought'Length) = Thought'Length,
                          "between characters");
               end;
            end if;
         end loop;
         Assert (Detail (Trace, 20)
                 = "intent act ("
                   & Organs.Mini_Rag.Whole_Table (1 .. Organs.Intender.Max_Basis_Bytes - Mark'Length) & Mark & ")",
                 "the intender is given the packed schema, and its basis is cut at its bound: " & Detail (Trace, 20));
         Assert (Detail (Trace, 21) = "act -> tools.execute (static Ada table)", "routed by the static table");
         Assert (Starts_With (Turn_Cycle.Text_Of (Trace, Trace.Output),
                              "[tools.execute] On 'what now?': down-1, down-2, down-3, down-4, up-1 (5/8 passes)"),
                 "the synthesis lists the organ's moves: " & Turn_Cycle.Text_Of (Trace, Trace.Output));
         Assert (Organs.Texts.Was_Cut (Trace.Texts), "the trace knows it cut");
      end loop;
   end Test_A_Second_Implementation;

   --  Every organ at its bounds (names of Max_Name_Bytes, the longest
   --  recall and packed schema, key parts of Max_Part_Bytes, all eight
   --  passes): the words the cycle writes around them fit the margins the
   --  trace's bounds leave, so no part is cut but those of the organs' own
   --  texts (the thoughts and the basis), and the store is not short
   procedure Test_Every_Part_Fits_At_The_Bounds (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Chosen   : constant Organs.Sets.Organ_Set := Test_Organs.Widest_Set;
      Key_Part : constant String := [1 .. Session_Keys.Max_Part_Bytes => 'k'];
      Input    : constant String := [1 .. 4_096 => 'i'];
      Mark     : constant String := Organs.Texts.Cut_Mark;
      Table    : Session_Table.Table;
      Session  : Session_Table.Session_Access;
      Memory   : Session_Table.Memory_Access;
      Trace    : Turn_Cycle.Turn_Trace;
   begin
      Table.Open (Chosen, Session_Keys.Key_Of (Key_Part, Key_Part, Key_Part), Session, Memory);
      Turn_Cycle.Run (Chosen, Test_Organs.Stub_Curve, Session.all, Memory.all, Key_Part, Key_Part, Key_Part,
                      Input, Trace);
      Assert (Turn_Cycle.Is_Complete (Trace) and then Trace.Passes = 8, "a complete turn of eight passes");
      for Step in Cycle_Order.Step_Index loop
         if Cycle_Order.Phase (Step) /= Cycle_Order.Reason then
            Assert (not Ends_With (Detail (Trace, Step), Mark),
                    "step" & Step'Image & "'s words fit its bound: " & Detail (Trace, Step));
         end if;
      end loop;
      Assert (Ends_With (Detail (Trace, 2), "recall: '" & Test_Organs.Fullest_Recall & "'"), "the whole recall");
      Assert (Detail (Trace, 3) = Test_Organs.Widest_Name & ", reversed, in " & Test_Organs.Widest_Name,
              "a draw of the widest names, reversed");
      Assert (Detail (Trace, 19) = "packed schema " & Test_Organs.Fullest_Schema, "the whole packed schema");
      Assert (not Ends_With (Turn_Cycle.Text_Of (Trace, Trace.Output), Mark)
              and then Ends_With (Turn_Cycle.Text_Of (Trace, Trace.Output),
                                  Test_Organs.Widest_Name & " (8/8 passes); recalled '"
                                  & Test_Organs.Fullest_Recall & "'."),
              "the output lists every move and the whole recall");
      Assert (Turn_Cycle.Text_Of (Trace, Trace.Uid) = Key_Part and then Turn_Cycle.Text_Of (Trace, Trace.Server) = Key_Part,
              "the key parts whole");
      Assert (Organs.Texts.Used (Trace.Texts) <= Turn_Cycle.Text_Capacity, "within the store");
   end Test_Every_Part_Fits_At_The_Bounds;

   --  A memory that cannot be read: the recall fails, and the turn goes on
   type Unreadable_Morag is limited new Organs.Morag.Organ with null record;
   overriding function Recall (Self : Unreadable_Morag; Held : Organs.Morag.Memory'Class; Input : String)
     return Organs.Morag.Recall_Result is (Organs.Morag.No_Recall_Available);
   overriding procedure Remember
     (Self : Unreadable_Morag; Held : in out Organs.Morag.Memory'Class; Turn : Positive; Input : String) is null;

   Unreadable : aliased constant Unreadable_Morag := (null record);

   procedure Test_A_Recall_That_Fails (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Chosen : constant Organs.Sets.Organ_Set := (Test_Organs.Stub_Set with delta Morag => Unreadable'Access);
      Table  : Session_Table.Table;
      Trace  : Turn_Cycle.Turn_Trace;
   begin
      Turn (Chosen, Table, "u", "where is the moon?", Trace);
      Assert (Turn_Cycle.Is_Complete (Trace), "the turn goes on to its end");
      Assert (Ada.Strings.Fixed.Index (Detail (Trace, 2), "recall: unavailable (") > 0,
              "and its sense step says the memory could not be read: " & Detail (Trace, 2));
   end Test_A_Recall_That_Fails;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Each_Organ_Through_Its_Seam'Access, "each stub organ honours its spec through its seam");
      Register_Routine (T, Test_The_Stubs_Through_The_Cycle'Access, "the stub organs through the cycle");
      Register_Routine (T, Test_A_Second_Implementation'Access, "a second implementation runs through the cycle unchanged");
      Register_Routine (T, Test_A_Recall_That_Fails'Access, "a recall that fails is said, and the turn goes on");
      Register_Routine (T, Test_Every_Part_Fits_At_The_Bounds'Access,
                        "at every organ's bounds, the cycle's words fit the trace's margins");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Turn_Cycle");
   end Name;

end Turn_Cycle_Tests;
