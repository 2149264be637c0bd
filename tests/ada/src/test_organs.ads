--  The organs the Ada tests run the cycle with: the stub organs of the
--  fixture the body ships, chosen through the same seam the boot uses, and
--  a second implementation of three organs, written here from their specs
--  alone, which the cycle must run unchanged:
--  - Still_Drive_Box: a Drive-Box whose energy never moves;
--  - Verbose_Cognition: a cognition whose thoughts run far past their
--    bound, in two-byte characters, so the cut must fall between them;
--  - Eager_Intender: an intender that always acts, on a long basis that
--    starts with the packed schema it was given.
--  And the widest organs: every text one gives is as long as its spec
--  allows (card, position and move names, the recall, the packed schema),
--  so that a turn through them fills every part of the trace to its bound.

with Energy_Gate;
with Organs;
with Organs.Cognition;
with Organs.Celtic_Cross;
with Organs.Deck;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Model_Port;
with Organs.Morag;
with Organs.Sets;
with Organs.Texts;

package Test_Organs is

   Fixture_Path : constant String := "stubs/organs/default.json";
   --  The tests run from the checkout's root

   function Stub_Set return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Stub_Set'Result);
   --  The stub organs of the shipped fixture, loaded once

   function Stub_Curve return Energy_Gate.Threshold_Curve
   with Post => Energy_Gate.Is_Valid (Stub_Curve'Result);

   type Still_Drive_Box (Energy : Organs.Millis) is
     limited new Organs.Drive_Box.Organ with null record;

   overriding function Fresh
     (Self : Still_Drive_Box; Session_Key : String)
      return Organs.Drive_Box.Reservoir;

   overriding function Snapshot_Of
     (Self : Still_Drive_Box; State : Organs.Drive_Box.Reservoir)
      return Organs.Drive_Box.Snapshot;

   overriding procedure Recharge
     (Self : Still_Drive_Box; State : in out Organs.Drive_Box.Reservoir) is null;

   overriding procedure Spend
     (Self   : Still_Drive_Box;
      State  : in out Organs.Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count;
      Used   : Organs.Drive_Box.Turn_Use) is null;

   E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);

   type Verbose_Cognition (Thought_Bytes : Positive) is
     limited new Organs.Cognition.Organ with null record;
   --  Each thought: Thought_Bytes bytes, E_Acute after a one-byte lead

   overriding function Move_Name
     (Self : Verbose_Cognition; Way : Organs.Direction; Rank : Organs.Quarter)
      return String;
   --  "down-1" .. "down-4", "up-1" .. "up-4"

   overriding procedure Reason
     (Self    : Verbose_Cognition;
      Pass    : Organs.Cognition.Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Organs.Texts.Store;
      Call    : out Organs.Cognition.Call_Record);

   overriding procedure Synthesize
     (Self   : Verbose_Cognition;
      Given  : Organs.Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Organs.Texts.Store;
      Call   : out Organs.Cognition.Call_Record);
   --  Nothing: the cycle's output of the moves

   Eager_Basis : constant String (1 .. 500) := [others => 'w'];

   type Eager_Intender is limited new Organs.Intender.Organ with null record;

   overriding function Asks_Model (Self : Eager_Intender) return Boolean is (False);

   overriding procedure State_Intent
     (Self          : Eager_Intender;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Organs.Intender.Statement;
      Basis         : in out Organs.Texts.Store;
      Call          : out Organs.Model_Port.Call_Record);
   --  Always Act, on Packed_Schema & Eager_Basis

   function Second_Set (Energy : Organs.Millis; Thought_Bytes : Positive)
     return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Second_Set'Result);
   --  The stub organs, but for the three above

   Widest_Name : constant String := [1 .. Organs.Max_Name_Bytes => 'n'];

   type Wide_Deck is limited new Organs.Deck.Organ with null record;
   overriding function Size (Self : Wide_Deck) return Organs.Deck.Card_Count is (3);
   overriding function Name (Self : Wide_Deck; Which : Organs.Deck.Card) return String is (Widest_Name);

   type Wide_Cross is limited new Organs.Celtic_Cross.Organ with null record;
   --  Every draw the first card, reversed, in a position of the widest name
   overriding function Shuffled_For (Self : Wide_Cross; Session_Key : String)
     return Organs.Celtic_Cross.Draw_State is (0);
   overriding procedure Next
     (Self   : Wide_Cross;
      From   : Organs.Deck.Organ'Class;
      State  : in out Organs.Celtic_Cross.Draw_State;
      Result : out Organs.Celtic_Cross.Draw);
   overriding function Position_Name (Self : Wide_Cross; Pass : Energy_Gate.Pass_Index)
     return String is (Widest_Name);

   type Wide_Cognition is limited new Verbose_Cognition with null record;
   overriding function Move_Name
     (Self : Wide_Cognition; Way : Organs.Direction; Rank : Organs.Quarter)
      return String is (Widest_Name);

   Fullest_Recall : constant String := [1 .. Organs.Morag.Max_Recall_Bytes => 'r'];

   type Full_Morag is limited new Organs.Morag.Organ with null record;
   overriding function Recall (Self : Full_Morag; Held : Organs.Morag.Memory'Class; Input : String)
     return Organs.Morag.Recall_Result is (Organs.Morag.Recall_Of (Fullest_Recall));
   overriding procedure Remember
     (Self : Full_Morag; Held : in out Organs.Morag.Memory'Class; Turn : Positive; Input : String) is null;

   Fullest_Schema : constant String := [1 .. Organs.Mini_Rag.Max_Schema_Bytes => 's'];

   type Full_Mini_Rag is limited new Organs.Mini_Rag.Organ with null record;
   overriding function Packed_Schema (Self : Full_Mini_Rag; Input : String) return String is
     (Fullest_Schema);

   function Widest_Set return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Widest_Set'Result);
   --  The widest organs, full energy (all eight passes) and the eager
   --  intender (its basis cut at its bound)

end Test_Organs;
