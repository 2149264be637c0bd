with Ada.IO_Exceptions;
with Input_Guard;
with Json_Reader;
with Session_Keys;
with Organs.Deck;
with Text_Files;

package body Stub_Organs.Fixtures is

   use Json_Reader;
   use Organs;
   use type Energy_Gate.Pass_Index;
   use type Input_Guard.Finding;

   Max_Fixture_Bytes : constant := 1024 * 1024;

   Fixture_Limits : constant Input_Guard.Limits :=
     (Max_Depth => 16, Max_Elements => 100_000);

   function Read_File (Path : String) return String is
   begin
      if not Text_Files.Is_File (Path) then
         raise Fixture_Error with "organ fixture " & Path & ": no such file";
      end if;
      if Text_Files.Size (Path) > Max_Fixture_Bytes then
         raise Fixture_Error with "organ fixture " & Path & ": larger than 1 MiB";
      end if;
      return Text_Files.Read (Path);
   exception
      when Ada.IO_Exceptions.Name_Error | Ada.IO_Exceptions.Use_Error
         | Ada.IO_Exceptions.End_Error | Ada.IO_Exceptions.Device_Error =>
         raise Fixture_Error with "organ fixture " & Path & ": cannot be read";
   end Read_File;

   --  Checks of one parsed fixture document; every failure names its field
   --  path.  The document is read with the body's own Json_Reader, after
   --  the same guard as protocol lines.
   type Reader
     (Document : not null access constant Json_Reader.Document;
      Text     : not null access constant String)
   is limited record
      Path : Unbounded_String;
   end record;

   type Expected_Kind is (An_Object, A_List, A_Text, An_Integer, A_Number);

   type Node_List is array (Positive range <>) of Node_Id;

   procedure Fail (Self : Reader; Field, Problem : String)
   with No_Return;

   procedure Fail (Self : Reader; Field, Problem : String) is
   begin
      raise Fixture_Error with
        "organ fixture " & To_String (Self.Path) & ": " & Field & ": "
        & Problem;
   end Fail;

   function Image_Of (Number : Natural) return String is
     (Number'Image (2 .. Number'Image'Last));

   function Path_Of (Field, Name : String) return String is
     (if Field = "" then Name else Field & "." & Name);

   function Kind_Is (Self : Reader; Node : Node_Id; Expected : Expected_Kind)
     return Boolean is
     (case Expected is
         when An_Object => Kind (Self.Document.all, Node) = Object_Value,
         when A_List => Kind (Self.Document.all, Node) = Array_Value,
         when A_Text => Kind (Self.Document.all, Node) = String_Value,
         when An_Integer | A_Number =>
            Kind (Self.Document.all, Node) = Number_Value);

   function Member
     (Self : Reader; Parent : Node_Id; Field, Name : String;
      Expected : Expected_Kind) return Node_Id
   is
      Value : constant Node_Id :=
        Json_Reader.Member (Self.Document.all, Self.Text.all, Parent, Name);
   begin
      if Value = No_Node then
         Fail (Self, Path_Of (Field, Name), "missing");
      elsif not Kind_Is (Self, Value, Expected) then
         Fail (Self, Path_Of (Field, Name), "expected "
               & (case Expected is
                     when An_Object => "an object",
                     when A_List => "an array",
                     when A_Text => "a string",
                     when An_Integer => "an integer",
                     when A_Number => "a number"));
      end if;
      return Value;
   end Member;

   function Has_Member (Self : Reader; Parent : Node_Id; Name : String)
     return Boolean is
     (Json_Reader.Member (Self.Document.all, Self.Text.all, Parent, Name)
      /= No_Node);

   function Items (Self : Reader; List : Node_Id) return Node_List is
      Count : Natural := 0;
      Item  : Node_Id := First_Child (Self.Document.all, List);
   begin
      while Item /= No_Node loop
         Count := Count + 1;
         Item := Next_Sibling (Self.Document.all, Item);
      end loop;
      return Result : Node_List (1 .. Count) do
         Item := First_Child (Self.Document.all, List);
         for Slot of Result loop
            Slot := Item;
            Item := Next_Sibling (Self.Document.all, Item);
         end loop;
      end return;
   end Items;

   function To_Millis (Self : Reader; Value : Node_Id; Field : String)
     return Millis
   is
      Number : Long_Float;
   begin
      begin
         Number := Long_Float'Value (Raw (Self.Document.all, Self.Text.all, Value));
      exception
         when Constraint_Error =>
            Fail (Self, Field, "not a number this body can read");
      end;
      if Number not in 0.0 .. 1.0 then
         Fail (Self, Field, "must lie in [0, 1], is "
               & Raw (Self.Document.all, Self.Text.all, Value));
      end if;
      return Millis (Long_Float'Rounding (Number * 1000.0));
   end To_Millis;

   function Number_Field
     (Self : Reader; Parent : Node_Id; Field, Name : String) return Millis
   is (To_Millis (Self, Member (Self, Parent, Field, Name, A_Number),
                  Path_Of (Field, Name)));

   function Integer_Field
     (Self : Reader; Parent : Node_Id; Field, Name : String;
      Low, High : Long_Long_Integer) return Long_Long_Integer
   is
      Node  : constant Node_Id := Member (Self, Parent, Field, Name, An_Integer);
      Value : Long_Long_Integer;
   begin
      begin
         Value := Long_Long_Integer'Value
           (Raw (Self.Document.all, Self.Text.all, Node));
      exception
         when Constraint_Error =>
            Fail (Self, Path_Of (Field, Name), "expected an integer");
      end;
      if Value not in Low .. High then
         Fail (Self, Path_Of (Field, Name), "must lie in" & Low'Image & " .."
               & High'Image);
      end if;
      return Value;
   end Integer_Field;

   function Text_Field
     (Self : Reader; Parent : Node_Id; Field, Name : String) return String
   is
      Value : constant String :=
        Text (Self.Document.all, Self.Text.all,
              Member (Self, Parent, Field, Name, A_Text));
   begin
      if Value'Length = 0 then
         Fail (Self, Path_Of (Field, Name), "must not be empty");
      end if;
      return Value;
   end Text_Field;

   --  An array of exactly Count names (any count when 0): non-empty strings
   --  of at most Max_Name_Bytes, each made a fixture text
   function Text_List
     (Self : Reader; Parent : Node_Id; Field, Name : String;
      Count : Natural) return Text_Vectors.Vector
   is
      List  : constant Node_List :=
        Items (Self, Member (Self, Parent, Field, Name, A_List));
      Texts : Text_Vectors.Vector;
   begin
      if Count > 0 and then List'Length /= Count then
         Fail (Self, Path_Of (Field, Name), "needs exactly" & Count'Image
               & " entries, has" & List'Length'Image);
      end if;
      for Index in List'Range loop
         if not Kind_Is (Self, List (Index), A_Text)
           or else Text (Self.Document.all, Self.Text.all, List (Index)) = ""
         then
            Fail (Self, Path_Of (Field, Name) & "[" & Image_Of (Natural (Index)) & "]",
                  "expected a non-empty string");
         elsif Text (Self.Document.all, Self.Text.all, List (Index))'Length
           > Max_Name_Bytes
         then
            Fail (Self, Path_Of (Field, Name) & "[" & Image_Of (Natural (Index)) & "]",
                  "longer than" & Max_Name_Bytes'Image & " bytes");
         end if;
         Texts.Append
           (new String'(Text (Self.Document.all, Self.Text.all, List (Index))));
      end loop;
      return Texts;
   end Text_List;

   function Intent_Named (Self : Reader; Name, Field : String)
     return Intent_Kind is
   begin
      for Intent in Intent_Kind loop
         if Intent_Name (Intent) = Name then
            return Intent;
         end if;
      end loop;
      Fail (Self, Field, "unknown intent '" & Name
            & "' (the router knows ask, act, remember, chat)");
   end Intent_Named;

   function Curve_From
     (Self : Reader; Values : Node_Id; Field : String)
      return Energy_Gate.Threshold_Curve
   is
      List  : constant Node_List := Items (Self, Values);
      Curve : Energy_Gate.Threshold_Curve;
   begin
      if List'Length /= 8 then
         Fail (Self, Field, "needs 8 thresholds, has" & List'Length'Image);
      end if;
      for Pass in Energy_Gate.Pass_Index loop
         declare
            Item  : constant Node_Id := List (Positive (Pass));
            Where : constant String := Field & "[" & Image_Of (Natural (Pass)) & "]";
         begin
            if not Kind_Is (Self, Item, A_Number) then
               Fail (Self, Where, "expected a number");
            end if;
            Curve (Pass) := To_Millis (Self, Item, Where);
         end;
      end loop;
      if not Energy_Gate.Is_Valid (Curve) then
         declare
            Bad : constant Energy_Gate.Pass_Index :=
              Energy_Gate.First_Violation (Curve);
         begin
            Fail (Self, Field,
                  (if Bad = 1 then "threshold 1 must be 0 (the first pass always runs)"
                   else "threshold" & Bad'Image & " is below threshold"
                        & Energy_Gate.Pass_Index'Image (Bad - 1)
                        & " (the curve must never decrease)"));
         end;
      end if;
      return Curve;
   end Curve_From;

   --  Parse Text as one JSON document after the guard, or fail naming why.
   procedure Parse_Checked
     (Self : Reader; Document : in out Json_Reader.Document; Text : String)
   is
   begin
      Document.Parse (Text, Fixture_Limits);
      if not Document.Is_Valid then
         if Input_Guard.Inspect (Text, Fixture_Limits).Kind
           /= Input_Guard.Clean
         then
            Fail (Self, "(document)", "not UTF-8 JSON within 16 levels");
         end if;
         Fail (Self, "(document)", Document.Error_Message & " at column"
               & Document.Error_Column'Image);
      end if;
   end Parse_Checked;

   --  One reader per section of the document, each filling its part of
   --  the fixture.

   procedure Read_Deck (Self : Reader; Deck : Node_Id; Result : in out Fixture)
   is
   begin
      Result.Cards := Text_List (Self, Deck, "deck", "cards", 0);
      if Natural (Result.Cards.Length) < 3 then
         Fail (Self, "deck.cards", "needs at least 3 cards");
      elsif Natural (Result.Cards.Length) > Organs.Deck.Max_Cards then
         Fail (Self, "deck.cards", "has more than"
               & Organs.Deck.Max_Cards'Image & " cards");
      end if;
   end Read_Deck;

   procedure Read_Identity
     (Self : Reader; Identity : Node_Id; Result : in out Fixture)
   is
      Roles : constant Text_Vectors.Vector :=
        Text_List (Self, Identity, "identity", "roles", 3);
   begin
      Result.Identity_Seed := Interfaces.Unsigned_64
        (Integer_Field (Self, Identity, "identity", "seed",
                        0, Long_Long_Integer'Last));
      for Index in Result.Roles'Range loop
         Result.Roles (Index) := Roles (Index);
      end loop;
   end Read_Identity;

   procedure Read_Cross (Self : Reader; Cross : Node_Id; Result : in out Fixture)
   is
      Positions : constant Text_Vectors.Vector :=
        Text_List (Self, Cross, "celtic_cross", "positions", 8);
   begin
      Result.Draw_Seed := Interfaces.Unsigned_64
        (Integer_Field (Self, Cross, "celtic_cross", "seed",
                        0, Long_Long_Integer'Last));
      for Pass in Result.Positions'Range loop
         Result.Positions (Pass) := Positions (Positive (Pass));
      end loop;
   end Read_Cross;

   procedure Read_Drive_Box
     (Self : Reader; Drive : Node_Id; Result : in out Fixture)
   is
      Pins : constant Node_List :=
        Items (Self, Member (Self, Drive, "drive_box", "pinned", A_List));
   begin
      Result.Initial_Energy :=
        Number_Field (Self, Drive, "drive_box", "initial_energy");
      Result.Cost_Per_Pass :=
        Number_Field (Self, Drive, "drive_box", "cost_per_pass");
      Result.Recharge_Per_Turn :=
        Number_Field (Self, Drive, "drive_box", "recharge_per_turn");
      for Index in Pins'Range loop
         declare
            Field : constant String := "drive_box.pinned[" & Image_Of (Index) & "]";
            Pin   : constant Node_Id := Pins (Index);
         begin
            if not Kind_Is (Self, Pin, An_Object) then
               Fail (Self, Field, "expected an object");
            end if;
            Result.Pins.Append
              (Pinned_Energy'
                 (Key    => To_Unbounded_String
                    (Session_Keys.Key_Of
                       (Text_Field (Self, Pin, Field, "uid"),
                        Text_Field (Self, Pin, Field, "channel"),
                        Text_Field (Self, Pin, Field, "server"))),
                  Energy => Number_Field (Self, Pin, Field, "energy")));
         end;
      end loop;
   end Read_Drive_Box;

   procedure Read_Cognition
     (Self : Reader; Cognition : Node_Id; Result : in out Fixture)
   is
      Down : constant Text_Vectors.Vector :=
        Text_List (Self, Cognition, "cognition", "descent", 4);
      Up   : constant Text_Vectors.Vector :=
        Text_List (Self, Cognition, "cognition", "ascent", 4);
   begin
      for Rank in Quarter loop
         Result.Descent_Moves (Rank) := Down (Rank);
         Result.Ascent_Moves (Rank) := Up (Rank);
      end loop;
   end Read_Cognition;

   procedure Read_Morag (Self : Reader; Morag : Node_Id; Result : in out Fixture)
   is
   begin
      Result.Recall_Depth := Organs.Morag.Recall_Count
        (Integer_Field (Self, Morag, "morag", "recall_depth",
                        Long_Long_Integer (Organs.Morag.Recall_Count'First),
                        Long_Long_Integer (Organs.Morag.Recall_Count'Last)));
      Result.Excerpt_Bytes := Excerpt_Size
        (Integer_Field (Self, Morag, "morag", "excerpt_bytes",
                        Long_Long_Integer (Excerpt_Size'First),
                        Long_Long_Integer (Excerpt_Size'Last)));
   end Read_Morag;

   procedure Read_Intent
     (Self : Reader; Intent : Node_Id; Result : in out Fixture)
   is
      Rules : constant Node_List :=
        Items (Self, Member (Self, Intent, "intent", "rules", A_List));
   begin
      for Index in Rules'Range loop
         declare
            Field : constant String := "intent.rules[" & Image_Of (Index) & "]";
            Rule  : constant Node_Id := Rules (Index);
            Found : Natural := 0;
            Made  : Intent_Rule;
         begin
            if not Kind_Is (Self, Rule, An_Object) then
               Fail (Self, Field, "expected an object");
            end if;
            Made.Intent := Intent_Named
              (Self, Text_Field (Self, Rule, Field, "intent"),
               Field & ".intent");
            for Match in Match_Kind loop
               declare
                  Name : constant String :=
                    Folded (Match'Image);
               begin
                  if Has_Member (Self, Rule, Name) then
                     Found := Found + 1;
                     Made.Match := Match;
                     Made.Word := new String'
                       (Folded (Text_Field (Self, Rule, Field, Name)));
                  end if;
               end;
            end loop;
            if Found /= 1 then
               Fail (Self, Field, "needs exactly one of contains, "
                     & "starts_with, ends_with");
            end if;
            Result.Rules.Append (Made);
         end;
      end loop;
      Result.Default_Intent := Intent_Named
        (Self, Text_Field (Self, Intent, "intent", "default"),
         "intent.default");
   end Read_Intent;

   function Load (Path : String) return Fixture is
      Text     : aliased constant String := Read_File (Path);
      Document : aliased Json_Reader.Document;
      Self     : constant Reader :=
        (Document => Document'Access, Text => Text'Access,
         Path     => To_Unbounded_String (Path));
      Result   : Fixture;
   begin
      Parse_Checked (Self, Document, Text);
      if Kind (Document, Document.Root) /= Object_Value then
         Fail (Self, "(document)", "expected an object");
      end if;
      declare
         Root : constant Node_Id := Document.Root;

         function Section (Name : String) return Node_Id is
           (Member (Self, Root, "", Name, An_Object));
      begin
         Result.Name := To_Unbounded_String
           (Text_Field (Self, Root, "", "fixture"));
         Read_Deck (Self, Section ("deck"), Result);
         Read_Identity (Self, Section ("identity"), Result);
         Read_Cross (Self, Section ("celtic_cross"), Result);
         Read_Drive_Box (Self, Section ("drive_box"), Result);
         Result.Curve := Curve_From
           (Self,
            Member (Self, Section ("energy_curve"), "energy_curve",
                    "thresholds", A_List),
            "energy_curve.thresholds");
         Read_Cognition (Self, Section ("cognition"), Result);
         Read_Morag (Self, Section ("morag"), Result);
         Read_Intent (Self, Section ("intent"), Result);
      end;
      return Result;
   end Load;

   function Parse_Curve (Text : String) return Energy_Gate.Threshold_Curve is
      List     : aliased constant String := "[" & Text & "]";
      Document : aliased Json_Reader.Document;
      Self     : constant Reader :=
        (Document => Document'Access, Text => List'Access,
         Path     => To_Unbounded_String ("(--thresholds)"));
   begin
      Parse_Checked (Self, Document, List);
      return Curve_From (Self, Document.Root, "thresholds");
   end Parse_Curve;

end Stub_Organs.Fixtures;
