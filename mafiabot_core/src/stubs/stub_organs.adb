with Utf8;
with Organs.Celtic_Cross;
with Organs.Cognition;
with Organs.Deck;
with Organs.Drive_Box;
with Organs.Identity;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Model_Port;
with Organs.Texts;
with Organs.Word_Search;
with Session_Keys;

package body Stub_Organs is

   use Interfaces;
   use Organs;
   use type Organs.Deck.Card_Count;
   use type Organs.Celtic_Cross.Draw_State;

   procedure Set_Curve
     (Stub : in out Fixture; Curve : Energy_Gate.Threshold_Curve) is
   begin
      Stub.Curve := Curve;
   end Set_Curve;

   --  SplitMix64: a tiny generator whose whole state is one word, so a
   --  session's draws cost 8 bytes to keep.  The cross and the identity
   --  both draw with it.
   procedure Split_Mix
     (State : in out Celtic_Cross.Draw_State; Size : Deck.Card_Count;
      Result : out Celtic_Cross.Draw)
   with Pre => Size >= 1, Post => Result.Card <= Size
   is
      Mixed : Unsigned_64;
   begin
      State := State + 16#9E37_79B9_7F4A_7C15#;
      Mixed := Unsigned_64 (State);
      Mixed := (Mixed xor Shift_Right (Mixed, 30)) * 16#BF58_476D_1CE4_E5B9#;
      Mixed := (Mixed xor Shift_Right (Mixed, 27)) * 16#94D0_49BB_1331_11EB#;
      Mixed := Mixed xor Shift_Right (Mixed, 31);
      Result :=
        (Card     => Deck.Card
           (Shift_Right (Mixed, 1) mod Unsigned_64 (Size) + 1),
         Reversed => (Mixed and 1) = 1);
   end Split_Mix;

   function Seeded (Key : String; Seed : Unsigned_64)
     return Celtic_Cross.Draw_State is
     (Celtic_Cross.Draw_State (Session_Keys.Hash64 (Key) xor Seed));

   ---------------------------------------------------------------------
   --  B1

   type Stub_Deck (Stub : not null Fixture_Access) is
     limited new Deck.Organ with null record;

   overriding function Size (Self : Stub_Deck) return Deck.Card_Count is
     (Deck.Card_Count (Self.Stub.Cards.Length));

   overriding function Name (Self : Stub_Deck; Which : Deck.Card)
     return String is
     (Self.Stub.Cards.Element (Positive (Which)).all);

   ---------------------------------------------------------------------
   --  B3

   type Stub_Cross (Stub : not null Fixture_Access) is
     limited new Celtic_Cross.Organ with null record;

   overriding function Shuffled_For (Self : Stub_Cross; Session_Key : String)
     return Celtic_Cross.Draw_State is
     (Seeded (Session_Key, Self.Stub.Draw_Seed));

   overriding function Position_Name
     (Self : Stub_Cross; Pass : Energy_Gate.Pass_Index) return String is
     (Self.Stub.Positions (Pass).all);

   overriding procedure Next
     (Self   : Stub_Cross;
      From   : Deck.Organ'Class;
      State  : in out Celtic_Cross.Draw_State;
      Result : out Celtic_Cross.Draw)
   is
      pragma Unreferenced (Self);
   begin
      Split_Mix (State, From.Size, Result);
   end Next;

   ---------------------------------------------------------------------
   --  B2

   type Stub_Identity (Stub : not null Fixture_Access) is
     limited new Identity.Organ with null record;

   overriding function Role_Name
     (Self : Stub_Identity; Which : Identity.Role) return String is
     (Self.Stub.Roles (Positive (Which)).all);

   overriding function Provenance (Self : Stub_Identity) return String is
     ("(drawn from the " & To_String (Self.Stub.Name)
      & " organ fixture, identity seed" & Self.Stub.Identity_Seed'Image
      & ")");

   overriding function Draw
     (Self : Stub_Identity; From : Deck.Organ'Class)
      return Identity.Big_Three
   is
      State : Celtic_Cross.Draw_State :=
        Seeded ("identity" & Self.Stub.Identity_Seed'Image,
                Self.Stub.Draw_Seed);
      Cards : Identity.Big_Three := [others => 1];
      Taken : Natural := 0;
      Drawn : Celtic_Cross.Draw;
   begin
      --  The deck holds at least three distinct positions, so this ends.
      while Taken < 3 loop
         Split_Mix (State, From.Size, Drawn);
         if (for all K in 1 .. Taken =>
               Cards (Identity.Role (K)) /= Drawn.Card)
         then
            Taken := Taken + 1;
            Cards (Identity.Role (Taken)) := Drawn.Card;
         end if;
      end loop;
      return Cards;
   end Draw;

   ---------------------------------------------------------------------
   --  A1

   type Stub_Drive_Box (Stub : not null Fixture_Access) is
     limited new Drive_Box.Organ with null record;

   overriding function Fresh (Self : Stub_Drive_Box; Session_Key : String)
     return Drive_Box.Reservoir;

   overriding function Snapshot_Of
     (Self : Stub_Drive_Box; State : Drive_Box.Reservoir)
      return Drive_Box.Snapshot is
     ((Energy     => State.Level,
       Terrain    => Drive_Box.Terrain_Of (State.Level),
       Calls_Left => Drive_Box.Unmetered,
       Budget     => <>));

   overriding procedure Recharge
     (Self : Stub_Drive_Box; State : in out Drive_Box.Reservoir);

   overriding procedure Spend
     (Self   : Stub_Drive_Box;
      State  : in out Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count;
      Used   : Drive_Box.Turn_Use);

   overriding function Fresh (Self : Stub_Drive_Box; Session_Key : String)
     return Drive_Box.Reservoir is
   begin
      for Pin of Self.Stub.Pins loop
         if To_String (Pin.Key) = Session_Key then
            return (Level => To_Fraction (Pin.Energy), Held => True,
                    Log => <>);
         end if;
      end loop;
      return (Level => To_Fraction (Self.Stub.Initial_Energy), Held => False,
              Log => <>);
   end Fresh;

   overriding procedure Recharge
     (Self : Stub_Drive_Box; State : in out Drive_Box.Reservoir) is
   begin
      if not State.Held then
         State.Level := To_Fraction
           (Natural'Min (Energy_Gate.Full,
                         To_Millis (State.Level)
                         + Self.Stub.Recharge_Per_Turn));
      end if;
   end Recharge;

   overriding procedure Spend
     (Self   : Stub_Drive_Box;
      State  : in out Drive_Box.Reservoir;
      Passes : Energy_Gate.Pass_Count;
      Used   : Drive_Box.Turn_Use)
   is
      pragma Unreferenced (Used);
      --  The fixture's curve counts passes, not calls
   begin
      if not State.Held then
         State.Level := To_Fraction
           (Natural'Max (0, To_Millis (State.Level)
                            - Passes * Self.Stub.Cost_Per_Pass));
      end if;
   end Spend;

   ---------------------------------------------------------------------
   --  F1

   type Stub_Morag (Stub : not null Fixture_Access) is
     limited new Morag.Organ with null record;

   overriding function Recall
     (Self : Stub_Morag; Held : Morag.Memory'Class; Input : String)
      return Morag.Recall_Result
   is (if Held.Is_Readable
       then Morag.Recall_Of (Morag.Latest_Sharing (Held, Input))
       else Morag.No_Recall_Available);

   --  The first excerpt_bytes of the input, never cutting a character
   overriding procedure Remember
     (Self  : Stub_Morag;
      Held  : in out Morag.Memory'Class;
      Turn  : Positive;
      Input : String) is
   begin
      Held.Keep
        (Turn,
         Input (Input'First .. Input'First - 1
                + Utf8.Prefix_Length
                    (Input, Self.Stub.Excerpt_Bytes)),
         Self.Stub.Recall_Depth);
   end Remember;

   ---------------------------------------------------------------------
   --  C2

   type Stub_Cognition (Stub : not null Fixture_Access) is
     limited new Cognition.Organ with null record;

   overriding function Move_Name
     (Self : Stub_Cognition; Way : Direction; Rank : Quarter)
      return String
   is (if Way = Descent then Self.Stub.Descent_Moves (Rank).all
       else Self.Stub.Ascent_Moves (Rank).all);

   overriding procedure Synthesize
     (Self   : Stub_Cognition;
      Given  : Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Texts.Store;
      Call   : out Cognition.Call_Record);

   --  "<move> 'focus' through <draw>": the stub asks no model, so the
   --  port, the input, the recall and the previous thought go unread
   overriding procedure Reason
     (Self    : Stub_Cognition;
      Pass    : Cognition.Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Texts.Store;
      Call    : out Cognition.Call_Record)
   is
      pragma Unreferenced (Input, Port);
      Move : constant Fixture_Text :=
        (if Pass.Way = Descent then Self.Stub.Descent_Moves (Pass.Rank)
         else Self.Stub.Ascent_Moves (Pass.Rank));
   begin
      Call.Asked := False;
      Organs.Model_Port.Clear (Call.Facts);
      Texts.Add (Thought, Move.all);
      Texts.Add (Thought, " '");
      Texts.Add (Thought, Focus);
      Texts.Add (Thought, "' through ");
      Texts.Add_Kept (Thought, Pass.Draw);
   end Reason;

   --  Nothing: the cycle's own output (the moves that ran) is the stub's
   overriding procedure Synthesize
     (Self   : Stub_Cognition;
      Given  : Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Texts.Store;
      Call   : out Cognition.Call_Record)
   is
      pragma Unreferenced (Self, Given, Input, Port, Output);
   begin
      Call.Asked := False;
      Organs.Model_Port.Clear (Call.Facts);
   end Synthesize;

   ---------------------------------------------------------------------
   --  D3

   type Stub_Mini_Rag is limited new Mini_Rag.Organ with null record;

   --  The whole table, whatever the input: the stub ranks nothing
   overriding function Packed_Schema
     (Self : Stub_Mini_Rag; Input : String) return String
   is
      pragma Unreferenced (Self, Input);
   begin
      return Mini_Rag.Whole_Table;
   end Packed_Schema;

   ---------------------------------------------------------------------
   --  C3: the fixture's keyword rules, first match wins

   type Stub_Intender (Stub : not null Fixture_Access) is
     limited new Intender.Organ with null record;

   overriding function Asks_Model (Self : Stub_Intender) return Boolean is
     (False);

   overriding procedure State_Intent
     (Self          : Stub_Intender;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Intender.Statement;
      Basis         : in out Texts.Store;
      Call          : out Organs.Model_Port.Call_Record)
   is
      pragma Unreferenced (Packed_Schema, Port);

      procedure Stated_By_Rule (Intent : Intent_Kind) is
      begin
         Stated := (Intent    => Intent,
                    Source    => Intender.Rules,
                    Fallback  => Intender.No_Fallback,
                    Said      => <>,
                    Said_Last => 0);
         Call.Asked := False;
         Organs.Model_Port.Clear (Call.Facts);
      end Stated_By_Rule;

      --  Whether Word stands in Input from From on, Input's bytes folded as
      --  the other organs compare words (ASCII only: Latin-1 folding would
      --  rewrite the lead bytes of UTF-8 characters into other ones)
      --  (From - 1 <= Input'Last - Word'Length, as every caller sees to)
      function Stands_At (Word : String; From : Positive) return Boolean is
        (for all K in Word'Range =>
           Folded (Input (From + (K - Word'First))) = Word (K));

      Rule_Count  : constant Natural := Natural (Self.Stub.Rules.Length);
      Rules_Found : Word_Search.Word_Flags (1 .. Rule_Count);
      --  By rule number: whether its word stands in the input (contains
      --  rules only), all of them found in one search the first time a
      --  contains rule is reached: a rule a pass would cost the input's
      --  length once per rule
      Searched    : Boolean := False;

      procedure Search_Contains is
         Words  : Word_Search.Word_List (1 .. Rule_Count) :=
           [others => Word_Search.Word_Text
                        (Self.Stub.Rules.First_Element.Word)];
         --  The contains rules' words, the first Count of them; a list of
         --  non-null texts needs some text in every place until then
         Number : array (1 .. Rule_Count) of Positive := [others => 1];
         --  The rule each of Words comes from
         Count  : Natural := 0;
      begin
         for Index in 1 .. Rule_Count loop
            if Self.Stub.Rules.Element (Index).Match = Contains then
               Count := Count + 1;
               Words (Count) :=
                 Word_Search.Word_Text (Self.Stub.Rules.Element (Index).Word);
               Number (Count) := Index;
            end if;
         end loop;
         declare
            Found : Word_Search.Word_Flags (1 .. Count);
         begin
            Word_Search.Find_Folded (Words (1 .. Count), Input, Found);
            Rules_Found := [others => False];
            for K in 1 .. Count loop
               Rules_Found (Number (K)) := Found (K);
            end loop;
         end;
         Searched := True;
      end Search_Contains;
   begin
      for Index in 1 .. Rule_Count loop
         declare
            Rule : constant Intent_Rule := Self.Stub.Rules.Element (Index);
            Word : String renames Rule.Word.all;
            Hit  : Boolean;
         begin
            case Rule.Match is
               when Contains =>
                  if not Searched then
                     Search_Contains;
                  end if;
                  Hit := Rules_Found (Index);
               when Starts_With =>
                  Hit := Input'Length >= Word'Length
                    and then Stands_At (Word, Input'First);
               when Ends_With =>
                  Hit := Input'Length >= Word'Length
                    and then Stands_At (Word, Input'Last - Word'Length + 1);
            end case;
            if Hit then
               Stated_By_Rule (Rule.Intent);
               Texts.Add (Basis, "fixture rule ");
               Texts.Add_Image (Basis, Index);
               return;
            end if;
         end;
      end loop;
      Stated_By_Rule (Self.Stub.Default_Intent);
      Texts.Add (Basis, "fixture default");
   end State_Intent;

   ---------------------------------------------------------------------

   function Organs_Of (Stub : not null Fixture_Access)
     return Organs.Sets.Organ_Set is
     ((Drive_Box    => Sets.Drive_Box_Organ'(new Stub_Drive_Box'(Stub => Stub)),
       Deck         => Sets.Deck_Organ'(new Stub_Deck'(Stub => Stub)),
       Identity     => Sets.Identity_Organ'(new Stub_Identity'(Stub => Stub)),
       Celtic_Cross => Sets.Celtic_Cross_Organ'(new Stub_Cross'(Stub => Stub)),
       Morag        => Sets.Morag_Organ'(new Stub_Morag'(Stub => Stub)),
       Cognition    => Sets.Cognition_Organ'(new Stub_Cognition'(Stub => Stub)),
       Mini_Rag     => Sets.Mini_Rag_Organ'(new Stub_Mini_Rag'(null record)),
       Intender     => Sets.Intender_Organ'(new Stub_Intender'(Stub => Stub))));

end Stub_Organs;
