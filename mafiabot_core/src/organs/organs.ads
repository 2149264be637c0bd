--  The organs behind the cycle.  Each child package is one organ: its spec
--  states the contract a real organ will honour; its body is a stub that
--  answers from the canned blocks of the organ fixture (stubs/organs/*.json).
--  This root package holds what they share: the fixture, loaded once at
--  start-up and read-only afterwards.
--
--  An organ whose answer is a text of the trace (a draw's description, a
--  thought) writes it into the turn's text store (Json_Text.Text_Store)
--  rather than returning it: every text of a turn lives there, and a
--  returned string would only be copied in after it.

with Ada.Containers.Vectors;
with Ada.Strings.Unbounded;
with Interfaces;
with Energy_Gate;

package Organs is

   use Ada.Strings.Unbounded;

   subtype Millis is Energy_Gate.Millis;

   type Intent_Kind is (Ask, Act, Remember, Chat);
   --  What the model means to do with a turn (step 20); the router maps
   --  each to a route by a static table (law L2)

   function Intent_Name (Intent : Intent_Kind) return String;
   --  The intent as the wire and the fixture spell it: ask, act, ...

   function Is_Word_Byte (C : Character) return Boolean is
     (C in 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' or else C >= Character'Val (128));
   --  Part of a word, for the organs that compare texts by their words:
   --  ASCII letters and digits, and every byte of a non-ASCII character

   function Folded (C : Character) return Character is
     (if C in 'A' .. 'Z' then Character'Val (Character'Pos (C) + 32) else C);
   --  ASCII case folding; bytes of UTF-8 sequences are left alone (Latin-1
   --  folding would rewrite them)

   function Folded (Text : String) return String is
     ([for Index in Text'Range => Folded (Text (Index))]);

   type Direction is (Descent, Ascent);

   subtype Quarter is Positive range 1 .. 4;
   --  A pass's rank within its direction

   type Fixture_Text is access constant String;
   --  A text of the fixture, made once by the loader and read where it
   --  stands, with no copy, for as long as the body runs (the fixture is
   --  never freed: it lives as long)

   Max_Name_Bytes : constant := 128;
   --  The longest name a fixture may give a card, a role, a cross position
   --  or a move.  A turn's trace quotes some forty of them, and the store
   --  its texts are kept in is sized for that (Turn_Cycle.Text_Capacity).

   type Move_Names is array (Quarter) of Fixture_Text;
   type Position_Names is array (Energy_Gate.Pass_Index) of Fixture_Text;
   type Role_Names is array (1 .. 3) of Fixture_Text;

   type Match_Kind is (Contains, Starts_With, Ends_With);

   type Intent_Rule is record
      Intent : Intent_Kind;
      Match  : Match_Kind;
      Word   : Fixture_Text;
   end record;
   --  One line of the C3 stub's table: lower-cased input matching Word

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

   subtype Recall_Count is Positive range 1 .. 16;
   subtype Excerpt_Size is Positive range 16 .. 1024;

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
      Recall_Depth      : Recall_Count;
      Excerpt_Bytes     : Excerpt_Size;
      Rules             : Rule_Vectors.Vector;
      Default_Intent    : Intent_Kind;
   end record;
   --  Every canned block the stubs answer from, and the energy gate's
   --  curve.  Only Organs.Fixtures.Load makes one, and it refuses a curve
   --  that Energy_Gate.Is_Valid rejects.

   Fixture_Error : exception;
   --  A fixture that cannot be used; the message names the file and field

private

   type Intent_Spelling is access constant String;

   Intent_Spellings : constant array (Intent_Kind) of Intent_Spelling :=
     [for Intent in Intent_Kind =>
        new String'(Folded (Intent'Image))];
   --  Spelled once: every turn names its intent several times

   function Intent_Name (Intent : Intent_Kind) return String is
     (Intent_Spellings (Intent).all);

end Organs;
