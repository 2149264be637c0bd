with Cycle_Order;
with Organs.Deck;

package body Turn_Tool is

   use Json_Reader;
   use type Organs.Intent_Kind;

   Key_Parts : constant array (1 .. 3) of access constant String :=
     [new String'("uid"), new String'("channel"), new String'("server")];

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
      Request : Turn_Request;

      function Refuse (Problem : String) return Turn_Request is
        ((Valid => False, Problem => To_Unbounded_String (Problem),
          others => <>));

      --  Why Field is not a usable string, or "" with its value in Target.
      function Text_Of (Field : String; Target : out Unbounded_String)
        return String
      is
         Value : constant Node_Id :=
           (if Arguments = No_Node then No_Node
            else Member (Message, Line, Arguments, Field));
      begin
         Target := Null_Unbounded_String;
         if Value = No_Node then
            return "invalid argument '" & Field & "': missing (a string is"
              & " required)";
         elsif Kind (Message, Value) /= String_Value then
            return "invalid argument '" & Field & "': expected a string";
         end if;
         Target := To_Unbounded_String (Text (Message, Line, Value));
         return "";
      end Text_Of;
   begin
      if Arguments /= No_Node then
         if Kind (Message, Arguments) /= Object_Value then
            return Refuse ("invalid arguments: expected an object with input,"
                           & " uid, channel and server");
         end if;
         declare
            Item : Node_Id := First_Child (Message, Arguments);
         begin
            while Item /= No_Node loop
               declare
                  Field : constant String := Key (Message, Line, Item);
               begin
                  if Field /= "input"
                    and then (for all Part of Key_Parts => Field /= Part.all)
                  then
                     return Refuse
                       ("invalid argument '" & Field & "': unknown (the tool"
                        & " takes input, uid, channel and server)");
                  end if;
               end;
               Item := Next_Sibling (Message, Item);
            end loop;
         end;
      end if;
      declare
         Problem : constant String := Text_Of ("input", Request.Input);
      begin
         if Problem /= "" then
            return Refuse (Problem);
         end if;
      end;
      for Index in Key_Parts'Range loop
         declare
            Field   : constant String := Key_Parts (Index).all;
            Target  : Unbounded_String;
            Problem : constant String := Text_Of (Field, Target);
         begin
            if Problem /= "" then
               return Refuse (Problem);
            elsif Length (Target) = 0 then
               return Refuse ("invalid argument '" & Field
                              & "': must not be empty");
            elsif Length (Target) > Max_Key_Part_Bytes then
               return Refuse ("invalid argument '" & Field & "': longer than"
                              & Max_Key_Part_Bytes'Image & " bytes");
            elsif (for some C of To_String (Target) =>
                     C < ' ' or else C = Character'Val (127))
            then
               return Refuse ("invalid argument '" & Field
                              & "': control characters are not allowed");
            end if;
            case Index is
               when 1 => Request.Uid := Target;
               when 2 => Request.Channel := Target;
               when 3 => Request.Server := Target;
            end case;
         end;
      end loop;
      Request.Valid := True;
      return Request;
   end Check_Arguments;

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

   --  A step as the trace gives it, up to its detail, written once at
   --  elaboration: {"index":N,"name":"...","organ":"...","status":"..."
   function Step_Opening
     (Step : Cycle_Order.Step_Index; Status : String) return String
   is
      Json : Json_Text.Builder;
   begin
      Json.Start_Object;
      Json.Int_Field ("index", Long_Long_Integer (Step));
      Json.Text_Field ("name", Cycle_Order.Name (Step));
      Json.Text_Field ("organ", Cycle_Order.Organ (Step));
      Json.Text_Field ("status", Status);
      Json.End_Object;
      declare
         Whole : constant String := Json.Image;
      begin
         return Whole (Whole'First .. Whole'Last - 1);
      end;
   end Step_Opening;

   type Step_Fragments is array (Cycle_Order.Step_Index)
     of Json_Text.Fragment;

   function Ran_Members (Step : Cycle_Order.Step_Index) return String is
      Opening : constant String := Step_Opening (Step, "ran");
   begin
      return Opening (Opening'First + 1 .. Opening'Last);
   end Ran_Members;

   Ran_Step_Members : constant Step_Fragments :=
     [for Step in Cycle_Order.Step_Index =>
        Json_Text.To_Fragment (Ran_Members (Step))];
   --  The members before the detail of a step that ran

   Skipped_Step : constant Step_Fragments :=
     [for Step in Cycle_Order.Step_Index =>
        Json_Text.To_Fragment (Step_Opening (Step, "skipped") & "}")];
   --  A step that did not run, whole: it has no detail

   procedure Write_Structured
     (Json     : in out Json_Text.Builder;
      Request  : Turn_Request;
      Trace    : Turn_Cycle.Turn_Trace;
      Stub     : Organs.Fixture;
      Identity : Organs.Identity.Big_Three)
   is
      use type Turn_Cycle.Step_Status;
   begin
      Json.Start_Object;
      Json.Key ("session");
      Json.Start_Object;
      Json.Text_Field ("uid", To_String (Request.Uid));
      Json.Text_Field ("channel", To_String (Request.Channel));
      Json.Text_Field ("server", To_String (Request.Server));
      Json.End_Object;
      Json.Int_Field ("turn", Long_Long_Integer (Trace.Turn));
      Json.Key ("energy");
      Json.Fraction (Trace.Energy);
      Json.Int_Field ("passes_run", Long_Long_Integer (Trace.Passes));
      Json.Key ("steps");
      Json.Start_Array;
      for Step in Cycle_Order.Step_Index loop
         if Trace.Steps (Step).Status = Turn_Cycle.Ran then
            Json.Start_Object;
            Json.Members (Ran_Step_Members (Step));
            Json.Text_Field
              ("detail", Turn_Cycle.Text_Of (Trace, Trace.Steps (Step).Detail));
            Json.End_Object;
         else
            Json.Raw (Skipped_Step (Step));
         end if;
      end loop;
      Json.End_Array;
      Json.Key ("route");
      Json.Start_Object;
      Json.Text_Field ("intent", Organs.Intent_Name (Trace.Intent));
      Json.Text_Field ("target", Turn_Cycle.Text_Of (Trace, Trace.Route));
      Json.End_Object;
      Json.Key ("coherence");
      Json.Start_Object;
      Json.Key ("score");
      Json.Fraction (Trace.Coherence);
      Json.Key ("drift");
      Json.Fraction (Trace.Drift);
      Json.End_Object;
      Json.Text_Field ("output", Turn_Cycle.Text_Of (Trace, Trace.Output));
      Json.Key ("identity");
      Json.Start_Object;
      Json.Key ("roles");
      Json.Start_Array;
      for Role of Stub.Roles loop
         Json.Text (To_String (Role));
      end loop;
      Json.End_Array;
      Json.Key ("cards");
      Json.Start_Array;
      for Card of Identity loop
         Json.Text (Organs.Deck.Name (Stub, Card));
      end loop;
      Json.End_Array;
      Json.End_Object;
      Json.End_Object;
   end Write_Structured;

   procedure Write_Result
     (Json     : in out Json_Text.Builder;
      Scratch  : in out Trace_Copies;
      Request  : Turn_Request;
      Trace    : Turn_Cycle.Turn_Trace;
      Stub     : Organs.Fixture;
      Identity : Organs.Identity.Big_Three) is
   begin
      Scratch.Plain.Reset;
      Write_Structured (Scratch.Plain, Request, Trace, Stub, Identity);
      Scratch.Quoted.Reset;
      Write_Structured (Scratch.Quoted, Request, Trace, Stub, Identity);
      Json.Key ("content");
      Json.Start_Array;
      Json.Start_Object;
      Json.Text_Field ("type", "text");
      Json.Key ("text");
      Json.Start_Text;
      Json.Text_Part (Turn_Cycle.Text_Of (Trace, Trace.Output));
      Json.Text_Part ([ASCII.LF, ASCII.LF]);
      Json.Text_Part_Document (Scratch.Quoted);
      Json.End_Text;
      Json.End_Object;
      Json.End_Array;
      Json.Key ("structuredContent");
      Json.Raw_Document (Scratch.Plain);
      Json.Bool_Field ("isError", False);
   end Write_Result;

end Turn_Tool;
