with Cycle_Order;
with Organs.Deck;

package body Turn_Tool is

   use Json_Reader;
   use type Organs.Intent_Kind;

   subtype Key_Part is Argument range Uid .. Server;

   Argument_Names : constant Json_Reader.Name_List
     (1 .. Argument'Pos (Argument'Last) + 1) :=
     [new String'("input"), new String'("uid"), new String'("channel"),
      new String'("server")];

   function Argument_Name (Field : Argument) return String is
     (Argument_Names (Argument'Pos (Field) + 1).all);

   function Schema_Of_String (Description : String) return String is
     ("{""type"":""string"",""description"":" & Json_Text.Quoted (Description)
      & "}");

   Input_Schema : constant String :=
     "{""type"":""object"",""properties"":{"
     & """input"":" & Schema_Of_String ("The user's turn, as said.")
     & ",""uid"":" & Schema_Of_String ("Who speaks (1-256 bytes).")
     & ",""channel"":" & Schema_Of_String ("Where, within the server.")
     & ",""server"":" & Schema_Of_String ("Which server or platform.")
     & "},""required"":[""input"",""uid"",""channel"",""server""],"
     & """additionalProperties"":false}";

   Fraction_Schema : constant String :=
     "{""type"":""number"",""minimum"":0,""maximum"":1}";

   function Intent_Enum return String is
      Listed : Unbounded_String := To_Unbounded_String ("[");
   begin
      for Intent in Organs.Intent_Kind loop
         if Intent /= Organs.Intent_Kind'First then
            Append (Listed, ",");
         end if;
         Append (Listed, Json_Text.Quoted (Organs.Intent_Name (Intent)));
      end loop;
      return To_String (Listed) & "]";
   end Intent_Enum;

   Output_Schema : constant String :=
     "{""type"":""object"",""properties"":{"
     & """session"":{""type"":""object"",""properties"":{"
     & """uid"":{""type"":""string""},""channel"":{""type"":""string""},"
     & """server"":{""type"":""string""}},"
     & """required"":[""uid"",""channel"",""server""],"
     & """additionalProperties"":false},"
     & """turn"":{""type"":""integer"",""minimum"":1},"
     & """energy"":" & Fraction_Schema & ","
     & """passes_run"":{""type"":""integer"",""minimum"":1,""maximum"":8},"
     & """steps"":{""type"":""array"",""minItems"":23,""maxItems"":23,"
     & """items"":{""type"":""object"",""properties"":{"
     & """index"":{""type"":""integer"",""minimum"":1,""maximum"":23},"
     & """name"":{""type"":""string""},""organ"":{""type"":""string""},"
     & """status"":{""enum"":[""ran"",""skipped""]},"
     & """detail"":{""type"":""string""}},"
     & """required"":[""index"",""name"",""organ"",""status""],"
     & """additionalProperties"":false}},"
     & """route"":{""type"":""object"",""properties"":{"
     & """intent"":{""enum"":" & Intent_Enum & "},"
     & """target"":{""type"":""string""}},"
     & """required"":[""intent"",""target""],""additionalProperties"":false},"
     & """coherence"":{""type"":""object"",""properties"":{"
     & """score"":" & Fraction_Schema & ",""drift"":" & Fraction_Schema & "},"
     & """required"":[""score"",""drift""],""additionalProperties"":false},"
     & """output"":{""type"":""string""},"
     & """identity"":{""type"":""object"",""properties"":{"
     & """roles"":{""type"":""array"",""items"":{""type"":""string""},"
     & """minItems"":3,""maxItems"":3},"
     & """cards"":{""type"":""array"",""items"":{""type"":""string""},"
     & """minItems"":3,""maxItems"":3}},"
     & """required"":[""roles"",""cards""],""additionalProperties"":false}},"
     & """required"":[""session"",""turn"",""energy"",""passes_run"",""steps"","
     & """route"",""coherence"",""output"",""identity""],"
     & """additionalProperties"":false}";

   procedure Write_Definition (Json : in out Json_Text.Builder) is
   begin
      Json.Start_Object;
      Json.Text_Field ("name", Name);
      Json.Text_Field ("title", "One turn through the mafiabot cycle");
      Json.Text_Field
        ("description",
         "Carry one user turn, scoped to its session (uid, channel, server),"
         & " through the body's fixed 23-step metacognitive cycle. Returns"
         & " the synthesized output and the full cycle trace. Sessions never"
         & " share state.");
      Json.Raw_Field ("inputSchema", Input_Schema);
      Json.Raw_Field ("outputSchema", Output_Schema);
      Json.Key ("annotations");
      Json.Start_Object;
      Json.Bool_Field ("readOnlyHint", False);
      Json.Bool_Field ("destructiveHint", False);
      Json.Bool_Field ("idempotentHint", False);
      Json.Bool_Field ("openWorldHint", False);
      Json.End_Object;
      Json.End_Object;
   end Write_Definition;

   function Check_Arguments
     (Message   : Json_Reader.Document;
      Line      : String;
      Arguments : Json_Reader.Node_Id) return Turn_Request
   is
      Given : Argument_Nodes := [others => No_Node];
      --  Each argument's value; of duplicates the last, as Member finds

      function Refuse (Problem : String) return Turn_Request is
        ((Valid => False, Problem => To_Unbounded_String (Problem),
          others => <>));
   begin
      if Arguments /= No_Node then
         if Kind (Message, Arguments) /= Object_Value then
            return Refuse ("invalid arguments: expected an object with input,"
                           & " uid, channel and server");
         end if;
         declare
            Found   : Member_Values (Argument_Names'Range);
            Unknown : Node_Id;
         begin
            Find_Members (Message, Line, Arguments, Argument_Names, Found,
                          Unknown);
            if Unknown /= No_Node then
               return Refuse
                 ("invalid argument '" & Key (Message, Line, Unknown)
                  & "': unknown (the tool takes input, uid, channel"
                  & " and server)");
            end if;
            Given := [for Field in Argument =>
                        Found (Argument'Pos (Field) + 1)];
         end;
      end if;
      for Field in Argument loop
         if Given (Field) = No_Node then
            return Refuse ("invalid argument '" & Argument_Name (Field)
                           & "': missing (a string is required)");
         elsif Kind (Message, Given (Field)) /= String_Value then
            return Refuse ("invalid argument '" & Argument_Name (Field)
                           & "': expected a string");
         end if;
         if Field in Key_Part then
            declare
               Value : constant String := Text (Message, Line, Given (Field));
               Name  : String renames Argument_Name (Field);
            begin
               if Value'Length = 0 then
                  return Refuse ("invalid argument '" & Name
                                 & "': must not be empty");
               elsif Value'Length > Max_Key_Part_Bytes then
                  return Refuse ("invalid argument '" & Name
                                 & "': longer than"
                                 & Max_Key_Part_Bytes'Image & " bytes");
               elsif (for some C of Value =>
                        C < ' ' or else C = Character'Val (127))
               then
                  return Refuse ("invalid argument '" & Name
                                 & "': control characters are not"
                                 & " allowed");
               end if;
            end;
         end if;
      end loop;
      return (Valid => True, Problem => Null_Unbounded_String,
              Given => Given);
   end Check_Arguments;

   function Value
     (Message : Json_Reader.Document;
      Line    : String;
      Request : Turn_Request;
      Field   : Argument) return String is
     (Text (Message, Line, Request.Given (Field)));

   procedure Write_Refusal (Json : in out Json_Text.Builder; Problem : String)
   is
   begin
      Json.Key ("content");
      Json.Start_Array;
      Json.Start_Object;
      Json.Text_Field ("type", "text");
      Json.Text_Field ("text", Problem);
      Json.End_Object;
      Json.End_Array;
      Json.Bool_Field ("isError", True);
   end Write_Refusal;

   procedure Write_Identity
     (Json     : in out Json_Text.Builder;
      Stub     : Organs.Fixture;
      Identity : Organs.Identity.Big_Three) is
   begin
      Json.Reset;
      Json.Start_Object;
      Json.Key ("roles");
      Json.Start_Array;
      for Role of Stub.Roles loop
         Json.Text (Role.all);
      end loop;
      Json.End_Array;
      Json.Key ("cards");
      Json.Start_Array;
      for Card of Identity loop
         Json.Text (Organs.Deck.Name (Stub, Card).all);
      end loop;
      Json.End_Array;
      Json.End_Object;
   end Write_Identity;

   --  The structured result of every turn of Passes passes, with a hole for
   --  each value that changes from turn to turn.  Fill_Result fills the
   --  holes in the order written here.
   procedure Write_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Json_Text.Builder;
      Passes   : Energy_Gate.Pass_Count)
   with Pre => Json.Inside_String = Identity.Inside_String;

   procedure Write_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Json_Text.Builder;
      Passes   : Energy_Gate.Pass_Count)
   is
      use Json_Text;
   begin
      Json.Start_Object;
      Json.Key ("session");
      Json.Start_Object;
      Json.Key ("uid");
      Json.Hole (Text_Hole);
      Json.Key ("channel");
      Json.Hole (Text_Hole);
      Json.Key ("server");
      Json.Hole (Text_Hole);
      Json.End_Object;
      Json.Key ("turn");
      Json.Hole (Number_Hole);
      Json.Key ("energy");
      Json.Hole (Number_Hole);
      Json.Int_Field ("passes_run", Long_Long_Integer (Passes));
      Json.Key ("steps");
      Json.Start_Array;
      for Step in Cycle_Order.Step_Index loop
         Json.Start_Object;
         Json.Int_Field ("index", Long_Long_Integer (Step));
         Json.Text_Field ("name", Cycle_Order.Name (Step));
         Json.Text_Field ("organ", Cycle_Order.Organ (Step));
         if Turn_Cycle.Runs (Step, Passes) then
            Json.Text_Field ("status", "ran");
            Json.Key ("detail");
            Json.Hole (Text_Hole);
         else
            Json.Text_Field ("status", "skipped");
         end if;
         Json.End_Object;
      end loop;
      Json.End_Array;
      Json.Key ("route");
      Json.Start_Object;
      Json.Key ("intent");
      Json.Hole (Text_Hole);
      Json.Key ("target");
      Json.Hole (Text_Hole);
      Json.End_Object;
      Json.Key ("coherence");
      Json.Start_Object;
      Json.Key ("score");
      Json.Hole (Number_Hole);
      Json.Key ("drift");
      Json.Hole (Number_Hole);
      Json.End_Object;
      Json.Key ("output");
      Json.Hole (Text_Hole);
      Json.Key ("identity");
      Json.Raw_Document (Identity);
      Json.End_Object;
   end Write_Shape;


   procedure Set_Identity
     (Identity : in out Result_Identity;
      Stub     : Organs.Fixture;
      Drawn    : Organs.Identity.Big_Three) is
   begin
      Write_Identity (Identity.Plain, Stub, Drawn);
      Write_Identity (Identity.Quoted, Stub, Drawn);
   end Set_Identity;

   procedure Write_Result_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Passes   : Energy_Gate.Pass_Count)
   is
      Quoted : Json_Text.Builder (Inside_String => True);
   begin
      Json.Key ("content");
      Json.Start_Array;
      Json.Start_Object;
      Json.Text_Field ("type", "text");
      Json.Key ("text");
      Json.Start_Text;
      Json.Hole (Json_Text.Text_Hole);
      Json.Text_Part ([ASCII.LF, ASCII.LF]);
      Write_Shape (Quoted, Identity.Quoted, Passes);
      Json.Document_Part (Quoted);
      Json.End_Text;
      Json.End_Object;
      Json.End_Array;
      Json.Key ("structuredContent");
      Write_Shape (Json, Identity.Plain, Passes);
      Json.Bool_Field ("isError", False);
   end Write_Result_Shape;

   procedure Fill_Result
     (Json  : in out Json_Text.Builder;
      Trace : Turn_Cycle.Turn_Trace)
   is
      use type Turn_Cycle.Step_Status;
      Parts : Json_Text.Stored_Texts (1 .. Result_Holes);
      Last  : Natural := 0;

      procedure Next (Part : Json_Text.Stored_Text) is
      begin
         Last := Last + 1;
         Parts (Last) := Part;
      end Next;

      --  The values of one copy of Write_Shape's document, in its order
      procedure Structured is
      begin
         for Part of Json_Text.Stored_Texts'
           [Trace.Uid, Trace.Channel, Trace.Server, Trace.Turn_Text,
            Trace.Energy_Text]
         loop
            Next (Part);
         end loop;
         for Step in Cycle_Order.Step_Index loop
            if Trace.Steps (Step).Status = Turn_Cycle.Ran then
               Next (Trace.Steps (Step).Detail);
            end if;
         end loop;
         for Part of Json_Text.Stored_Texts'
           [Trace.Intent_Name, Trace.Route, Trace.Coherence_Text,
            Trace.Drift_Text, Trace.Output]
         loop
            Next (Part);
         end loop;
      end Structured;
   begin
      Next (Trace.Output);
      Structured;
      Structured;
      Json.Fill_Stored (Trace.Texts, Parts (1 .. Last));
   end Fill_Result;

end Turn_Tool;
