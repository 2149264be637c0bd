--  The stub organs: one implementation of every organ contract (Organs.*),
--  answering from the canned blocks of an organ fixture
--  (stubs/organs/*.json).  The fixture is this package's private business:
--  nothing outside it reads a fixture's fields, and the cycle sees only the
--  organ interfaces, through the set Organs_Of fills (the seam a second
--  implementation uses the same way).
--
--  A fixture is made once, at start-up, by Stub_Organs.Fixtures.Load, which
--  checks every field (a bad fixture refuses to start); it is read-only
--  and lives as long as the body.  Besides the organs' blocks it holds the
--  energy gate's curve, which the boot hands to the cycle.

with Energy_Gate;
with Organs.Sets;

private with Ada.Containers.Vectors;
private with Ada.Strings.Unbounded;
private with Interfaces;
private with Organs.Morag;

package Stub_Organs is

   type Fixture is private;

   type Fixture_Access is access constant Fixture;

   function Curve (Stub : Fixture) return Energy_Gate.Threshold_Curve;
   --  The fixture's energy curve (or the --thresholds that replaced it)

   procedure Set_Curve
     (Stub : in out Fixture; Curve : Energy_Gate.Threshold_Curve)
   with Pre => Energy_Gate.Is_Valid (Curve);

   function Organs_Of (Stub : not null Fixture_Access)
     return Organs.Sets.Organ_Set
   with Post => Organs.Sets.Is_Complete (Organs_Of'Result);
   --  Every organ, answering from Stub

   Fixture_Error : exception;
   --  A fixture that cannot be used; the message names the file and field

private

   use Ada.Strings.Unbounded;

   subtype Millis is Energy_Gate.Millis;

   type Fixture_Text is access constant String;
   --  A text of the fixture, made once by the loader and read where it
   --  stands for as long as the body runs (the fixture is never freed)

   type Move_Names is array (Organs.Quarter) of Fixture_Text;
   type Position_Names is array (Energy_Gate.Pass_Index) of Fixture_Text;
   type Role_Names is array (1 .. 3) of Fixture_Text;

   type Match_Kind is (Contains, Starts_With, Ends_With);

   type Intent_Rule is record
      Intent : Organs.Intent_Kind;
      Match  : Match_Kind;
      Word   : Fixture_Text;
   end record;
   --  One line of the intent table: lower-cased input matching Word

   type Pinned_Energy is record
      Key    : Unbounded_String;
      Energy : Millis;
   end record;
   --  A session whose Drive-Box energy the fixture holds fixed

   package Text_Vectors is new Ada.Containers.Vectors
     (Positive, Fixture_Text);
   package Rule_Vectors is new Ada.Containers.Vectors
     (Positive, Intent_Rule);
   package Pin_Vectors is new Ada.Containers.Vectors
     (Positive, Pinned_Energy);

   subtype Excerpt_Size is Positive range 16 .. Organs.Morag.Max_Recall_Bytes;

   type Fixture is record
      Name              : Unbounded_String;
      Cards             : Text_Vectors.Vector;
      Identity_Seed     : Interfaces.Unsigned_64;
      Roles             : Role_Names;
      Draw_Seed         : Interfaces.Unsigned_64;
      Positions         : Position_Names;
      Initial_Energy    : Millis;
      Cost_Per_Pass     : Millis;
      Recharge_Per_Turn : Millis;
      Pins              : Pin_Vectors.Vector;
      Curve             : Energy_Gate.Threshold_Curve;
      Descent_Moves     : Move_Names;
      Ascent_Moves      : Move_Names;
      Recall_Depth      : Organs.Morag.Recall_Count;
      Excerpt_Bytes     : Excerpt_Size;
      Rules             : Rule_Vectors.Vector;
      Default_Intent    : Organs.Intent_Kind;
   end record;
   --  Every canned block the stubs answer from, and the energy gate's
   --  curve.  Only Stub_Organs.Fixtures.Load makes one: it refuses a curve
   --  that Energy_Gate.Is_Valid rejects, a deck of fewer than 3 or more
   --  than Organs.Deck.Max_Cards cards, and names longer than
   --  Organs.Max_Name_Bytes.

   function Curve (Stub : Fixture) return Energy_Gate.Threshold_Curve is
     (Stub.Curve);

end Stub_Organs;
