with Stub_Organs;
with Stub_Organs.Fixtures;

package body Test_Organs is

   Stub : constant Stub_Organs.Fixture_Access :=
     new Stub_Organs.Fixture'(Stub_Organs.Fixtures.Load (Fixture_Path));

   Stubs : constant Organs.Sets.Organ_Set := Stub_Organs.Organs_Of (Stub);

   function Stub_Set return Organs.Sets.Organ_Set is (Stubs);

   function Stub_Curve return Energy_Gate.Threshold_Curve is
     (Stub_Organs.Curve (Stub.all));

   overriding function Fresh
     (Self : Still_Drive_Box; Session_Key : String)
      return Organs.Drive_Box.Reservoir
   is
      pragma Unreferenced (Session_Key);
   begin
      return (Level => Organs.To_Fraction (Self.Energy), Held => True, Log => <>);
   end Fresh;

   overriding function Snapshot_Of
     (Self : Still_Drive_Box; State : Organs.Drive_Box.Reservoir)
      return Organs.Drive_Box.Snapshot
   is
      pragma Unreferenced (Self);
   begin
      return (Energy => State.Level, Terrain => Organs.Drive_Box.Steady,
              Calls_Left => Organs.Drive_Box.Unmetered, Budget => <>);
   end Snapshot_Of;

   --  Made afresh by every call: a name need not outlive it
   overriding function Move_Name
     (Self : Verbose_Cognition; Way : Organs.Direction; Rank : Organs.Quarter)
      return String
   is
      pragma Unreferenced (Self);
      Digit : constant String := Rank'Image;
   begin
      return (if Organs."=" (Way, Organs.Descent) then "down-" else "up-") & Digit (Digit'Last);
   end Move_Name;

   overriding procedure Reason
     (Self    : Verbose_Cognition;
      Pass    : Organs.Cognition.Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Organs.Texts.Store;
      Call    : out Organs.Cognition.Call_Record)
   is
      pragma Unreferenced (Pass, Input, Focus, Port);
   begin
      Call.Asked := False;
      Organs.Model_Port.Clear (Call.Facts);
      Organs.Texts.Add (Thought, "x");
      for Pair in 1 .. (Self.Thought_Bytes - 1) / 2 loop
         Organs.Texts.Add (Thought, E_Acute);
      end loop;
   end Reason;

   overriding procedure Synthesize
     (Self   : Verbose_Cognition;
      Given  : Organs.Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Organs.Texts.Store;
      Call   : out Organs.Cognition.Call_Record)
   is
      pragma Unreferenced (Self, Given, Input, Port, Output);
   begin
      Call.Asked := False;
      Organs.Model_Port.Clear (Call.Facts);
   end Synthesize;

   overriding procedure State_Intent
     (Self          : Eager_Intender;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Organs.Intender.Statement;
      Basis         : in out Organs.Texts.Store;
      Call          : out Organs.Model_Port.Call_Record)
   is
      pragma Unreferenced (Self, Input, Port);
   begin
      Stated := (Intent => Organs.Act, Source => Organs.Intender.Rules,
                 Fallback => Organs.Intender.No_Fallback, Said => <>, Said_Last => 0);
      Call.Asked := False;
      Organs.Model_Port.Clear (Call.Facts);
      Organs.Texts.Add (Basis, Packed_Schema);
      Organs.Texts.Add (Basis, Eager_Basis);
   end State_Intent;

   function Second_Set (Energy : Organs.Millis; Thought_Bytes : Positive)
     return Organs.Sets.Organ_Set is
     ((Stubs with delta
         Drive_Box => Organs.Sets.Drive_Box_Organ'(new Still_Drive_Box'(Energy => Energy)),
         Cognition => Organs.Sets.Cognition_Organ'
           (new Verbose_Cognition'(Thought_Bytes => Thought_Bytes)),
         Intender  => Organs.Sets.Intender_Organ'(new Eager_Intender'(null record))));

   overriding procedure Next
     (Self   : Wide_Cross;
      From   : Organs.Deck.Organ'Class;
      State  : in out Organs.Celtic_Cross.Draw_State;
      Result : out Organs.Celtic_Cross.Draw)
   is
      pragma Unreferenced (Self, From, State);
   begin
      Result := (Card => 1, Reversed => True);
   end Next;

   function Widest_Set return Organs.Sets.Organ_Set is
     ((Drive_Box    => Organs.Sets.Drive_Box_Organ'(new Still_Drive_Box'(Energy => 1_000)),
       Deck         => Organs.Sets.Deck_Organ'(new Wide_Deck'(null record)),
       Identity     => Stubs.Identity,
       Celtic_Cross => Organs.Sets.Celtic_Cross_Organ'(new Wide_Cross'(null record)),
       Morag        => Organs.Sets.Morag_Organ'(new Full_Morag'(null record)),
       Cognition    => Organs.Sets.Cognition_Organ'
         (new Wide_Cognition'(Thought_Bytes => Organs.Cognition.Max_Thought_Bytes * 2)),
       Mini_Rag     => Organs.Sets.Mini_Rag_Organ'(new Full_Mini_Rag'(null record)),
       Intender     => Organs.Sets.Intender_Organ'(new Eager_Intender'(null record))));

end Test_Organs;
