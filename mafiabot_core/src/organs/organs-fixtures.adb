with Ada.Characters.Handling;
with Ada.Directories;
with Ada.IO_Exceptions;
with GNATCOLL.JSON;
with Input_Guard;
with Session_Keys;
with Text_Files;

package body Organs.Fixtures is

   use GNATCOLL.JSON;
   use type Ada.Directories.File_Kind;
   use type Ada.Directories.File_Size;
   use type Energy_Gate.Pass_Index;
   use type Input_Guard.Finding;

   Max_Fixture_Bytes : constant := 1024 * 1024;

   Fixture_Limits : constant Input_Guard.Limits :=
     (Max_Depth => 16, Max_Elements => 100_000);

   function Read_File (Path : String) return String is
   begin
      if not Ada.Directories.Exists (Path)
        or else Ada.Directories.Kind (Path) /= Ada.Directories.Ordinary_File
      then
         raise Fixture_Error with "organ fixture " & Path & ": no such file";
      end if;
      if Ada.Directories.Size (Path) > Max_Fixture_Bytes then
         raise Fixture_Error with "organ fixture " & Path & ": larger than 1 MiB";
      end if;
      return Text_Files.Read (Path);
   exception
      when Ada.IO_Exceptions.Name_Error | Ada.IO_Exceptions.Use_Error
         | Ada.IO_Exceptions.End_Error | Ada.IO_Exceptions.Device_Error =>
         raise Fixture_Error with "organ fixture " & Path & ": cannot be read";
   end Read_File;

   --  Checks of one fixture document; every failure names its field path.
   type Reader is record
      Path : Unbounded_String;
   end record;

   procedure Fail (Self : Reader; Field, Problem : String)
   with No_Return;

   procedure Fail (Self : Reader; Field, Problem : String) is
   begin
      raise Fixture_Error with
        "organ fixture " & To_String (Self.Path) & ": " & Field & ": "
        & Problem;
   end Fail;

   function Member
     (Self : Reader; Parent : JSON_Value; Field, Name : String;
      Kind : JSON_Value_Type) return JSON_Value
   is
   begin
      if not Parent.Has_Field (Name) then
         Fail (Self, Field & "." & Name, "missing");
      end if;
      declare
         Value : constant JSON_Value := Parent.Get (Name);
      begin
         if Value.Kind /= Kind
           and then not (Kind = JSON_Float_Type
                         and then Value.Kind = JSON_Int_Type)
         then
            Fail (Self, Field & "." & Name, "expected "
                  & (case Kind is
                        when JSON_Object_Type => "an object",
                        when JSON_Array_Type => "an array",
                        when JSON_String_Type => "a string",
                        when JSON_Int_Type => "an integer",
                        when JSON_Float_Type => "a number",
                        when others => "another kind of value"));
         end if;
         return Value;
      end;
   end Member;

   function To_Millis (Self : Reader; Value : JSON_Value; Field : String)
     return Millis
   is
      Number : constant Long_Float :=
        (if Value.Kind = JSON_Int_Type
         then Long_Float (Long_Long_Integer'(Value.Get))
         else Value.Get_Long_Float);
   begin
      if Number not in 0.0 .. 1.0 then
         Fail (Self, Field, "must lie in [0, 1], is" & Number'Image);
      end if;
      return Millis (Long_Float'Rounding (Number * 1000.0));
   end To_Millis;

   function Number_Field
     (Self : Reader; Parent : JSON_Value; Field, Name : String) return Millis
   is (To_Millis (Self, Member (Self, Parent, Field, Name, JSON_Float_Type),
                  Field & "." & Name));

   function Integer_Field
     (Self : Reader; Parent : JSON_Value; Field, Name : String;
      Low, High : Long_Long_Integer) return Long_Long_Integer
   is
      Value : constant Long_Long_Integer :=
        Member (Self, Parent, Field, Name, JSON_Int_Type).Get;
   begin
      if Value not in Low .. High then
         Fail (Self, Field & "." & Name, "must lie in" & Low'Image & " .."
               & High'Image);
      end if;
      return Value;
   end Integer_Field;

   function Text_Field
     (Self : Reader; Parent : JSON_Value; Field, Name : String) return String
   is
      Value : constant String :=
        Member (Self, Parent, Field, Name, JSON_String_Type).Get;
   begin
      if Value'Length = 0 then
         Fail (Self, Field & "." & Name, "must not be empty");
      end if;
      return Value;
   end Text_Field;

   --  An array of exactly Count non-empty strings (any count when 0).
   function Text_List
     (Self : Reader; Parent : JSON_Value; Field, Name : String;
      Count : Natural) return Text_Vectors.Vector
   is
      List  : constant JSON_Array :=
        Member (Self, Parent, Field, Name, JSON_Array_Type).Get;
      Texts : Text_Vectors.Vector;
   begin
      if Count > 0 and then Length (List) /= Count then
         Fail (Self, Field & "." & Name, "needs exactly" & Count'Image
               & " entries, has" & Length (List)'Image);
      end if;
      for Index in 1 .. Length (List) loop
         declare
            Item : constant JSON_Value := Get (List, Index);
         begin
            if Item.Kind /= JSON_String_Type
              or else String'(Item.Get)'Length = 0
            then
               Fail (Self, Field & "." & Name & "[" & Index'Image & " ]",
                     "expected a non-empty string");
            end if;
            Texts.Append (String'(Item.Get));
         end;
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
     (Self : Reader; Values : JSON_Array; Field : String)
      return Energy_Gate.Threshold_Curve
   is
      Curve : Energy_Gate.Threshold_Curve;
   begin
      if Length (Values) /= 8 then
         Fail (Self, Field, "needs 8 thresholds, has" & Length (Values)'Image);
      end if;
      for Pass in Energy_Gate.Pass_Index loop
         declare
            Item : constant JSON_Value := Get (Values, Positive (Pass));
         begin
            if Item.Kind not in JSON_Int_Type | JSON_Float_Type then
               Fail (Self, Field & "[" & Pass'Image & " ]", "expected a number");
            end if;
            Curve (Pass) := To_Millis (Self, Item, Field & "[" & Pass'Image & " ]");
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

   function Load (Path : String) return Fixture is
      Self   : constant Reader := (Path => To_Unbounded_String (Path));
      Text   : constant String := Read_File (Path);
      Result : Fixture;
   begin
      if Input_Guard.Inspect (Text, Fixture_Limits).Kind /= Input_Guard.Clean
      then
         Fail (Self, "(document)", "not UTF-8 JSON within 16 levels");
      end if;
      declare
         Parsed : constant Read_Result := Read (Text);
      begin
         if not Parsed.Success then
            Fail (Self, "(document)", Format_Parsing_Error (Parsed.Error));
         elsif Parsed.Value.Kind /= JSON_Object_Type then
            Fail (Self, "(document)", "expected an object");
         end if;
         declare
            Root      : constant JSON_Value := Parsed.Value;
            Deck      : constant JSON_Value :=
              Member (Self, Root, "", "deck", JSON_Object_Type);
            Identity  : constant JSON_Value :=
              Member (Self, Root, "", "identity", JSON_Object_Type);
            Cross     : constant JSON_Value :=
              Member (Self, Root, "", "celtic_cross", JSON_Object_Type);
            Drive     : constant JSON_Value :=
              Member (Self, Root, "", "drive_box", JSON_Object_Type);
            Gate      : constant JSON_Value :=
              Member (Self, Root, "", "energy_curve", JSON_Object_Type);
            Cognition : constant JSON_Value :=
              Member (Self, Root, "", "cognition", JSON_Object_Type);
            Morag     : constant JSON_Value :=
              Member (Self, Root, "", "morag", JSON_Object_Type);
            Intent    : constant JSON_Value :=
              Member (Self, Root, "", "intent", JSON_Object_Type);
         begin
            Result.Name := To_Unbounded_String
              (Text_Field (Self, Root, "", "fixture"));
            Result.Cards := Text_List (Self, Deck, "deck", "cards", 0);
            if Natural (Result.Cards.Length) < 3 then
               Fail (Self, "deck.cards", "needs at least 3 cards");
            end if;
            Result.Identity_Seed := Interfaces.Unsigned_64
              (Integer_Field (Self, Identity, "identity", "seed",
                              0, Long_Long_Integer'Last));
            declare
               Roles : constant Text_Vectors.Vector :=
                 Text_List (Self, Identity, "identity", "roles", 3);
            begin
               for Index in Result.Roles'Range loop
                  Result.Roles (Index) := To_Unbounded_String (Roles (Index));
               end loop;
            end;
            Result.Draw_Seed := Interfaces.Unsigned_64
              (Integer_Field (Self, Cross, "celtic_cross", "seed",
                              0, Long_Long_Integer'Last));
            declare
               Positions : constant Text_Vectors.Vector :=
                 Text_List (Self, Cross, "celtic_cross", "positions", 8);
            begin
               for Pass in Result.Positions'Range loop
                  Result.Positions (Pass) :=
                    To_Unbounded_String (Positions (Positive (Pass)));
               end loop;
            end;

            Result.Initial_Energy :=
              Number_Field (Self, Drive, "drive_box", "initial_energy");
            Result.Cost_Per_Pass :=
              Number_Field (Self, Drive, "drive_box", "cost_per_pass");
            Result.Recharge_Per_Turn :=
              Number_Field (Self, Drive, "drive_box", "recharge_per_turn");
            declare
               Pins : constant JSON_Array :=
                 Member (Self, Drive, "drive_box", "pinned",
                         JSON_Array_Type).Get;
            begin
               for Index in 1 .. Length (Pins) loop
                  declare
                     Field : constant String :=
                       "drive_box.pinned[" & Index'Image & " ]";
                     Pin   : constant JSON_Value := Get (Pins, Index);
                  begin
                     if Pin.Kind /= JSON_Object_Type then
                        Fail (Self, Field, "expected an object");
                     end if;
                     Result.Pins.Append
                       (Pinned_Energy'(Key    => To_Unbounded_String
                           (Session_Keys.Key_Of
                              (Text_Field (Self, Pin, Field, "uid"),
                               Text_Field (Self, Pin, Field, "channel"),
                               Text_Field (Self, Pin, Field, "server"))),
                         Energy => Number_Field (Self, Pin, Field, "energy")));
                  end;
               end loop;
            end;

            Result.Curve := Curve_From
              (Self,
               Member (Self, Gate, "energy_curve", "thresholds",
                       JSON_Array_Type).Get,
               "energy_curve.thresholds");

            declare
               Down : constant Text_Vectors.Vector :=
                 Text_List (Self, Cognition, "cognition", "descent", 4);
               Up   : constant Text_Vectors.Vector :=
                 Text_List (Self, Cognition, "cognition", "ascent", 4);
            begin
               for Rank in Quarter loop
                  Result.Descent_Moves (Rank) := To_Unbounded_String (Down (Rank));
                  Result.Ascent_Moves (Rank) := To_Unbounded_String (Up (Rank));
               end loop;
            end;

            Result.Recall_Depth := Recall_Count
              (Integer_Field (Self, Morag, "morag", "recall_depth",
                              Long_Long_Integer (Recall_Count'First),
                              Long_Long_Integer (Recall_Count'Last)));
            Result.Excerpt_Bytes := Excerpt_Size
              (Integer_Field (Self, Morag, "morag", "excerpt_bytes",
                              Long_Long_Integer (Excerpt_Size'First),
                              Long_Long_Integer (Excerpt_Size'Last)));

            declare
               Rules : constant JSON_Array :=
                 Member (Self, Intent, "intent", "rules", JSON_Array_Type).Get;
            begin
               for Index in 1 .. Length (Rules) loop
                  declare
                     Field : constant String :=
                       "intent.rules[" & Index'Image & " ]";
                     Rule  : constant JSON_Value := Get (Rules, Index);
                     Found : Natural := 0;
                     Made  : Intent_Rule;
                  begin
                     if Rule.Kind /= JSON_Object_Type then
                        Fail (Self, Field, "expected an object");
                     end if;
                     Made.Intent := Intent_Named
                       (Self, Text_Field (Self, Rule, Field, "intent"),
                        Field & ".intent");
                     for Match in Match_Kind loop
                        declare
                           Name : constant String :=
                             Ada.Characters.Handling.To_Lower (Match'Image);
                        begin
                           if Rule.Has_Field (Name) then
                              Found := Found + 1;
                              Made.Match := Match;
                              Made.Word := To_Unbounded_String
                                (Ada.Characters.Handling.To_Lower
                                   (Text_Field (Self, Rule, Field, Name)));
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
            end;
            Result.Default_Intent := Intent_Named
              (Self, Text_Field (Self, Intent, "intent", "default"),
               "intent.default");
         end;
      end;
      return Result;
   end Load;

   function Parse_Curve (Text : String) return Energy_Gate.Threshold_Curve is
      Self   : constant Reader :=
        (Path => To_Unbounded_String ("(--thresholds)"));
      Parsed : constant Read_Result := Read ("[" & Text & "]");
   begin
      if Input_Guard.Inspect (Text, Fixture_Limits).Kind /= Input_Guard.Clean
        or else not Parsed.Success
        or else Parsed.Value.Kind /= JSON_Array_Type
      then
         Fail (Self, "thresholds", "expected 8 comma-separated numbers");
      end if;
      return Curve_From (Self, Parsed.Value.Get, "thresholds");
   end Parse_Curve;

end Organs.Fixtures;
