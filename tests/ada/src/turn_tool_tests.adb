with Ada.Strings.Fixed;
with AUnit.Assertions;
with Body_Config;
with GNATCOLL.JSON;
with Json_Text;
with Organs;
with Organs.Identity;
with Organs.Sets;
with Session_Keys;
with Session_Table;
with Test_Organs;
with Turn_Cycle;
with Turn_Tool;

package body Turn_Tool_Tests is

   use AUnit.Assertions;
   use GNATCOLL.JSON;
   use type Turn_Tool.Member_List;

   function Drift_Again (Trace : Turn_Cycle.Turn_Trace) return Organs.Fraction is (Trace.Drift);
   function Route_Again (Trace : Turn_Cycle.Turn_Trace) return Turn_Cycle.Span is (Trace.Route);

   --  The body's table with two members more, each added in one place: a
   --  number in an object that exists, and a text at the end of the result
   Regrouped : constant Turn_Tool.Member_List :=
     Turn_Tool.Result_Members (Turn_Tool.Result_Members'First .. Turn_Tool.Result_Members'First + 11)
     & Turn_Tool.Member'(Turn_Tool.Fraction, new String'("drift_again"), Turn_Tool.Coherence,
                         Turn_Tool.In_Summary, Drift_Again'Access)
     & Turn_Tool.Result_Members (Turn_Tool.Result_Members'First + 12 .. Turn_Tool.Result_Members'Last)
     & Turn_Tool.Member'(Turn_Tool.Text, new String'("route_again"), Turn_Tool.Result,
                         Turn_Tool.Trace_Only, Route_Again'Access);

   --  A turn of the second organ set in session u/c/s, its reservoir set
   --  to Energy tenths first
   procedure Run_At
     (Table : in out Session_Table.Table; Energy : Natural; Trace : out Turn_Cycle.Turn_Trace)
   is
      Session : Session_Table.Session_Access;
      Memory  : Session_Table.Memory_Access;
   begin
      Table.Open (Test_Organs.Second_Set (Energy * 100, 100), Session_Keys.Key_Of ("u", "c", "s"), Session,
                  Memory);
      Session.Reservoir.Level := Organs.To_Fraction (Energy * 100);
      Turn_Cycle.Run (Test_Organs.Second_Set (Energy * 100, 100), Test_Organs.Stub_Curve, Session.all, Memory.all,
                      "u", "c", "s", "a ""quoted"" turn", Trace);
   end Run_At;

   function Parsed (Text : String) return JSON_Value;

   --  The result of Trace for Identity, written as a template of Regrouped
   --  and filled
   function Reply_Of (Identity : Turn_Tool.Result_Identity; Trace : Turn_Cycle.Turn_Trace; Origin : String := "")
     return String is
      Skeleton, Filled : Json_Text.Builder;
      Pattern : Json_Text.Template;
   begin
      Skeleton.Start_Object;
      Turn_Tool.Write_Result_Shape (Skeleton, Identity, Trace.Passes, Regrouped, Given => Origin /= "");
      Skeleton.End_Object;
      Pattern := Skeleton.To_Template;
      Filled.Start_Filling (Pattern);
      Turn_Tool.Fill_Result (Filled, Identity, Trace, Regrouped, Origin);
      Assert (not Filled.Is_Filling, "every hole filled");
      Json_Text.Free (Pattern);
      return Filled.Image;
   end Reply_Of;

   function Parsed (Text : String) return JSON_Value is
      Result : constant Read_Result := Read (Text);
   begin
      Assert (Result.Success, "valid JSON: " & Text (Text'First .. Natural'Min (Text'Last, Text'First + 300)));
      return Result.Value;
   end Parsed;

   function Schema_Of (Members : Turn_Tool.Member_List) return JSON_Value is
      Json : Json_Text.Builder;
   begin
      Turn_Tool.Write_Output_Schema (Json, Members);
      return Parsed (Json.Image);
   end Schema_Of;

   --  The member names of an object schema, in order, and its required list
   function Properties (Schema : JSON_Value) return String;

   function Required (Schema : JSON_Value) return String is
      List  : constant JSON_Array := Schema.Get ("required");
      Names : String (1 .. 4096);
      Last  : Natural := 0;
   begin
      for Index in 1 .. Length (List) loop
         declare
            Name : constant String := Get (Get (List, Index));
         begin
            Names (Last + 1 .. Last + Name'Length + 1) := Name & ",";
            Last := Last + Name'Length + 1;
         end;
      end loop;
      return Names (1 .. Last);
   end Required;

   --  The member names of an object, in the order written
   function Members_Of (Object : JSON_Value) return String is
      Names : String (1 .. 4096);
      Last  : Natural := 0;

      procedure Each (Name : UTF8_String; Value : JSON_Value) is
         pragma Unreferenced (Value);
      begin
         Names (Last + 1 .. Last + Name'Length + 1) := Name & ",";
         Last := Last + Name'Length + 1;
      end Each;
   begin
      Map_JSON_Object (Object, Each'Access);
      return Names (1 .. Last);
   end Members_Of;

   function Properties (Schema : JSON_Value) return String is (Members_Of (Schema.Get ("properties")));

   --  The body's table is grouped, leaves room for its holes, and a table
   --  that splits a group, or names a member twice in one object, is not
   procedure Test_The_Table_Holds_Together (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Members : Turn_Tool.Member_List renames Turn_Tool.Result_Members;
      Split : constant Turn_Tool.Member_List :=
        Members & Turn_Tool.Member'(Turn_Tool.Text, new String'("late"), Turn_Tool.Session, Turn_Tool.Trace_Only,
                                  Route_Again'Access);
      Twice : constant Turn_Tool.Member_List := Members & Members (Members'Last);
   begin
      Assert (Turn_Tool.Is_Well_Formed (Members), "the result's table is grouped");
      Assert (Turn_Tool.Is_Well_Formed (Regrouped), "so is the extended one");
      Assert (not Turn_Tool.Is_Well_Formed (Split), "a session member after the session's group is refused");
      Assert (not Turn_Tool.Is_Well_Formed (Twice), "a name twice in one object is refused");
      Assert (Turn_Tool.Holes_Per_Copy (Members) = 13 + 23,
              "ten values, the origin (when given), the cognition account, the recall and a detail per step:"
              & Turn_Tool.Holes_Per_Copy (Members)'Image);
      Assert (1 + 2 * Turn_Tool.Holes_Per_Copy (Regrouped) <= Json_Text.Max_Holes, "the reply's holes fit");
   end Test_The_Table_Holds_Together;

   --  A member added in the one place, the table, is in the advertised
   --  schema (its object's properties and required list, in the table's
   --  order), in structuredContent and in the text block's copy, with the
   --  value its reader gives, for every number of passes: the three are
   --  derived from the table and cannot drift apart
   procedure Test_A_New_Member_Shows_Everywhere (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Identity : Turn_Tool.Result_Identity;
      Table    : Session_Table.Table;
      Trace    : Turn_Cycle.Turn_Trace;
      Chosen   : constant Organs.Sets.Organ_Set := Test_Organs.Stub_Set;
   begin
      declare
         Schema   : constant JSON_Value := Schema_Of (Regrouped);
         Original : constant JSON_Value := Schema_Of (Turn_Tool.Result_Members);
         Group    : constant JSON_Value := Schema.Get ("properties").Get ("coherence");
      begin
         Assert (Properties (Original) = "session,turn,energy,passes_run,steps,route,coherence,output,identity,"
                 and then Required (Original) = Properties (Original),
                 "the body's schema: " & Properties (Original));
         Assert (Properties (Schema) = Properties (Original) & "route_again,"
                 and then Required (Schema) = Properties (Schema), "a new member of the result: " & Properties (Schema));
         Assert (Properties (Group) = "score,drift,drift_again," and then Required (Group) = Properties (Group),
                 "a new member of an object: " & Properties (Group));
         Assert (String'(Group.Get ("properties").Get ("drift_again").Get ("type")) = "number", "a number's schema");
      end;
      Turn_Tool.Set_Identity (Identity, Chosen, Chosen.Identity.Draw (Chosen.Deck.all));
      for Energy in reverse 0 .. 10 loop
         Run_At (Table, Energy, Trace);
         declare
            Raw : constant String := Reply_Of (Identity, Trace);
         begin
            declare
               Reply      : constant JSON_Value := Parsed (Raw);
               Structured : constant JSON_Value := Reply.Get ("structuredContent");
               Text       : constant String := Get (Get (JSON_Array'(Reply.Get ("content")), 1), "text");
               Split      : constant Natural := Ada.Strings.Fixed.Index (Text, [ASCII.LF, ASCII.LF]);
               Copy       : constant JSON_Value := Parsed (Text (Split + 2 .. Text'Last));
               From       : constant Natural := Ada.Strings.Fixed.Index (Raw, """structuredContent"":");
               To         : constant Natural := Ada.Strings.Fixed.Index (Raw, ",""isError""");
               What       : constant String := "passes" & Trace.Passes'Image;
            begin
               Assert (Text (Text'First .. Split - 1) = Turn_Cycle.Text_Of (Trace, Trace.Output), What & ": output first");
               Assert (Text (Split + 2 .. Text'Last) = Raw (From + 20 .. To - 1),
                       What & ": the text block's copy is structuredContent, byte for byte");
               Assert (Members_Of (Structured) = Properties (Schema_Of (Regrouped))
                       and then Members_Of (Copy) = Members_Of (Structured), What & ": members in the schema's order");
               Assert (Members_Of (Structured.Get ("coherence")) = "score,drift,drift_again,", What & ": in its object");
               Assert (Float (Get_Long_Float (Structured.Get ("coherence").Get ("drift_again")))
                       = Float (Organs.To_Millis (Trace.Drift)) / 1000.0, What & ": a number, the reader's value");
               Assert (String'(Structured.Get ("route_again")) = Turn_Cycle.Text_Of (Trace, Trace.Route),
                       What & ": a text, the reader's value");
               Assert (Integer (Length (JSON_Array'(Structured.Get ("steps")))) = 23, What & ": 23 steps");
            end;
         end;
      end loop;
   end Test_A_New_Member_Shows_Everywhere;

   --  With a compact text block, the text is the output and, on one line,
   --  exactly the table's In_Summary members (a new one included) with the
   --  values structuredContent holds; structuredContent is the full
   --  block's, byte for byte, for every number of passes
   procedure Test_The_Compact_Text_Block_Is_The_Summary (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Full, Compact : Turn_Tool.Result_Identity;
      Table    : Session_Table.Table;
      Trace    : Turn_Cycle.Turn_Trace;
      Chosen   : constant Organs.Sets.Organ_Set := Test_Organs.Stub_Set;
      Drawn    : constant Organs.Identity.Big_Three := Chosen.Identity.Draw (Chosen.Deck.all);

      function Structured_Part (Raw : String) return String is
        (Raw (Ada.Strings.Fixed.Index (Raw, """structuredContent"":") .. Raw'Last));
   begin
      Turn_Tool.Set_Identity (Full, Chosen, Drawn);
      Turn_Tool.Set_Identity (Compact, Chosen, Drawn);
      Turn_Tool.Set_Text_Block (Compact, Body_Config.Compact);
      for Energy in reverse 0 .. 10 loop
         Run_At (Table, Energy, Trace);
         declare
            Long_Raw   : constant String := Reply_Of (Full, Trace);
            Raw        : constant String := Reply_Of (Compact, Trace);
            Reply      : constant JSON_Value := Parsed (Raw);
            Structured : constant JSON_Value := Reply.Get ("structuredContent");
            Text       : constant String := Get (Get (JSON_Array'(Reply.Get ("content")), 1), "text");
            Split      : constant Natural := Ada.Strings.Fixed.Index (Text, [ASCII.LF, ASCII.LF]);
            Line       : constant String := Text (Split + 2 .. Text'Last);
            Summary    : constant JSON_Value := Parsed (Line);
            What       : constant String := "passes" & Trace.Passes'Image;
         begin
            Assert (Structured_Part (Raw) = Structured_Part (Long_Raw), What & ": structuredContent unchanged");
            Assert (Text (Text'First .. Split - 1) = Turn_Cycle.Text_Of (Trace, Trace.Output), What & ": output first");
            Assert (Ada.Strings.Fixed.Index (Line, [ASCII.LF]) = 0, What & ": the summary is one line");
            Assert (Members_Of (Summary) = "turn,energy,passes_run,route,coherence,", What & ": " & Line);
            Assert (Members_Of (Summary.Get ("coherence")) = "score,drift,drift_again,", What & ": " & Line);
            Assert (Members_Of (Summary.Get ("route")) = Members_Of (Structured.Get ("route"))
                    and then String'(Summary.Get ("route").Get ("target"))
                             = Turn_Cycle.Text_Of (Trace, Trace.Route)
                    and then Integer'(Summary.Get ("turn")) = Integer'(Structured.Get ("turn"))
                    and then Integer'(Summary.Get ("passes_run")) = Integer (Trace.Passes),
                    What & ": the values of structuredContent: " & Line);
            Assert (Text'Length * 4 < String'(Get (Get (JSON_Array'(Parsed (Long_Raw).Get ("content")), 1), "text"))'Length,
                    What & ": under a quarter of the full block");
         end;
      end loop;
   end Test_The_Compact_Text_Block_Is_The_Summary;

   --  session.origin is a property of the session's schema but not a
   --  required one, and a result has it exactly when the call gave one:
   --  in structuredContent and its copy, in the session's order
   procedure Test_An_Origin_Given_Is_Echoed (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Identity : Turn_Tool.Result_Identity;
      Table    : Session_Table.Table;
      Trace    : Turn_Cycle.Turn_Trace;
      Chosen   : constant Organs.Sets.Organ_Set := Test_Organs.Stub_Set;
      Session  : constant JSON_Value :=
        Schema_Of (Turn_Tool.Result_Members).Get ("properties").Get ("session");
      Origin   : constant String := "level1 cli session=""q""";
   begin
      Assert (Properties (Session) = "uid,channel,server,origin," and then Required (Session) = "uid,channel,server,",
              "origin is optional: " & Properties (Session) & " / " & Required (Session));
      Turn_Tool.Set_Identity (Identity, Chosen, Chosen.Identity.Draw (Chosen.Deck.all));
      for Energy in reverse 0 .. 10 loop
         Run_At (Table, Energy, Trace);
         declare
            Without : constant JSON_Value := Parsed (Reply_Of (Identity, Trace));
            With_It : constant JSON_Value := Parsed (Reply_Of (Identity, Trace, Origin));
            Text    : constant String := Get (Get (JSON_Array'(With_It.Get ("content")), 1), "text");
            Copy    : constant JSON_Value :=
              Parsed (Text (Ada.Strings.Fixed.Index (Text, [ASCII.LF, ASCII.LF]) + 2 .. Text'Last));
            What    : constant String := "passes" & Trace.Passes'Image;
         begin
            Assert (Members_Of (Without.Get ("structuredContent").Get ("session")) = "uid,channel,server,",
                    What & ": none given, none written");
            Assert (Members_Of (With_It.Get ("structuredContent").Get ("session")) = "uid,channel,server,origin,"
                    and then String'(With_It.Get ("structuredContent").Get ("session").Get ("origin")) = Origin
                    and then String'(Copy.Get ("session").Get ("origin")) = Origin,
                    What & ": echoed, escaped, in both copies");
         end;
      end loop;
   end Test_An_Origin_Given_Is_Echoed;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_The_Table_Holds_Together'Access, "the result's table is grouped and fits its holes");
      Register_Routine (T, Test_A_New_Member_Shows_Everywhere'Access,
                        "a member added to the table is in the schema and both copies");
      Register_Routine (T, Test_The_Compact_Text_Block_Is_The_Summary'Access,
                        "a compact text block is the output and the table's summary members");
      Register_Routine (T, Test_An_Origin_Given_Is_Echoed'Access, "session.origin is there exactly when given");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Turn_Tool");
   end Name;

end Turn_Tool_Tests;
