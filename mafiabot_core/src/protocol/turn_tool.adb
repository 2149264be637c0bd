with Cycle_Order;
with Json_Bytes;
with Organs.Deck;
with Organs.Drive_Box;
with Organs.Intender;
with Organs.Model_Port;
with Organs.Morag;
with Organs.Texts;

package body Turn_Tool is

   use Json_Reader;

   subtype Key_Part is Argument range Uid .. Server;
   subtype Required_Argument is Argument range Input .. Server;

   Argument_Names : constant Json_Reader.Name_List
     (1 .. Argument'Pos (Argument'Last) + 1) :=
     [new String'("input"), new String'("uid"), new String'("channel"),
      new String'("server"), new String'("key_origin")];

   Argument_Set : constant Json_Reader.Name_Set :=
     Json_Reader.To_Name_Set (Argument_Names);

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
     & ",""key_origin"":" & Schema_Of_String
         ("Set by the Level1 Hermes plugin, not the model: who chose uid,"
          & " channel and server (1-256 bytes), echoed as session.origin.")
     & "},""required"":[""input"",""uid"",""channel"",""server""],"
     & """additionalProperties"":false}";

   procedure Write_Definition
     (Json         : in out Json_Text.Builder;
      Sampled      : Boolean := False;
      Intent_Asked : Boolean := False;
      Ranked       : Boolean := False) is
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
      Json.Key ("outputSchema");
      Write_Output_Schema
        (Json, Sampled => Sampled, Intent_Asked => Intent_Asked,
         Ranked => Ranked);
      Json.Key ("annotations");
      Json.Start_Object;
      Json.Bool_Field ("readOnlyHint", False);
      Json.Bool_Field ("destructiveHint", False);
      Json.Bool_Field ("idempotentHint", False);
      Json.Bool_Field ("openWorldHint", False);
      Json.End_Object;
      Json.End_Object;
   end Write_Definition;

   type Key_Fault is (None, Empty, Too_Long, Control);
   --  What a key part may be refused for, in the order it is checked

   function Fault_Of (Value : String) return Key_Fault is
     (if Value'Length = 0 then Empty
      elsif Value'Length > Max_Key_Part_Bytes then Too_Long
      elsif (for some C of Value => C < ' ' or else C = Character'Val (127))
      then Control
      else None);

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
            Find_Members (Message, Line, Arguments, Argument_Set, Found,
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
            if Field in Required_Argument then
               return Refuse ("invalid argument '" & Argument_Name (Field)
                              & "': missing (a string is required)");
            end if;
         elsif Kind (Message, Given (Field)) /= String_Value then
            return Refuse ("invalid argument '" & Argument_Name (Field)
                           & "': expected a string");
         end if;
         if Given (Field) /= No_Node and then Field in Key_Part | Key_Origin then
            declare
               Fault : Key_Fault;

               procedure Inspect (Value : String) is
               begin
                  Fault := Fault_Of (Value);
               end Inspect;
               --  Argument_Name (Field) is spelled in the refusals alone:
               --  each spelling is a copy, which a valid turn need not make
            begin
               Query_Text (Message, Line, Given (Field), Inspect'Access);
               case Fault is
                  when None =>
                     null;
                  when Empty =>
                     return Refuse ("invalid argument '" & Argument_Name (Field)
                                    & "': must not be empty");
                  when Too_Long =>
                     return Refuse ("invalid argument '" & Argument_Name (Field)
                                    & "': longer than"
                                    & Max_Key_Part_Bytes'Image & " bytes");
                  when Control =>
                     return Refuse ("invalid argument '" & Argument_Name (Field)
                                    & "': control characters are not"
                                    & " allowed");
               end case;
            end;
         end if;
      end loop;
      return (Valid => True, Problem => Null_Unbounded_String,
              Given => Given);
   end Check_Arguments;

   procedure Read_Values
     (Message : Json_Reader.Document;
      Line    : String;
      Request : Turn_Request;
      Process : not null access procedure
                  (Input, Uid, Channel, Server, Origin : String))
   is
      procedure Read
        (Field : Argument; Then_Do : not null access procedure (Text : String))
      is
      begin
         Query_Text (Message, Line, Request.Given (Field), Then_Do);
      end Read;

      --  One argument read a level, each level reading the next, the
      --  innermost calling Process with all of them
      procedure With_Input (Input : String) is
         procedure With_Uid (Uid : String) is
            procedure With_Channel (Channel : String) is
               procedure With_Server (Server : String) is
                  procedure With_Origin (Origin : String) is
                  begin
                     Process (Input, Uid, Channel, Server, Origin);
                  end With_Origin;
               begin
                  if Is_Given (Request, Key_Origin) then
                     Read (Key_Origin, With_Origin'Access);
                  else
                     With_Origin ("");
                  end if;
               end With_Server;
            begin
               Read (Turn_Tool.Server, With_Server'Access);
            end With_Channel;
         begin
            Read (Turn_Tool.Channel, With_Channel'Access);
         end With_Uid;
      begin
         Read (Turn_Tool.Uid, With_Uid'Access);
      end With_Input;
   begin
      Read (Turn_Tool.Input, With_Input'Access);
   end Read_Values;

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

   ---------------------------------------------------------------------
   --  The result, derived from its members

   use type Turn_Cycle.Step_Status;
   use type Organs.Intender.Intent_Source;

   function Status_Name (Status : Turn_Cycle.Step_Status) return String is
     (case Status is
         when Turn_Cycle.Ran => "ran",
         when Turn_Cycle.Skipped => "skipped");

   --  One model call: {"step":N,"thinker":"sampling","status":...}
   procedure Write_Call
     (Json : in out Json_Text.Builder; Call : Turn_Cycle.Call_Trace)
   with Pre => Call.Call.Asked;

   function Is_Shown (M : Member; Sampled, Ranked : Boolean) return Boolean
   is (case M.Kind is
          when Account => Sampled,
          when Recollection => Ranked,
          when others => True);
   --  An Account member is in the results of a sampling body alone, a
   --  Recollection member in those of a body whose recall ranks

   Recall_Mode : constant String := "relevance";
   --  The mode a Recollection names: --recall relevance, the one that ranks

   function Without_Quotes (Literal : String) return String
   is (Literal (Literal'First + 1 .. Literal'Last - 1));

   --  A Recollection's fixed parts, plain and quoted once (as the text
   --  block's copy holds them): quoting them once here, the quotes being
   --  a Recollection's only bytes that JSON escapes, a fill takes both
   --  forms and escapes nothing
   Recollection_Lead : constant String :=
     "{""mode"":""" & Recall_Mode & """,""hits"":[";
   First_Hit_Lead    : constant String := "{""turn"":";
   Next_Hit_Lead     : constant String := "," & First_Hit_Lead;
   Score_Lead        : constant String := ",""score"":";
   Quoted_Recollection_Lead : constant String :=
     Without_Quotes (Json_Text.Quoted (Recollection_Lead));
   Quoted_First_Hit_Lead    : constant String :=
     Without_Quotes (Json_Text.Quoted (First_Hit_Lead));
   Quoted_Next_Hit_Lead     : constant String :=
     Without_Quotes (Json_Text.Quoted (Next_Hit_Lead));
   Quoted_Score_Lead        : constant String :=
     Without_Quotes (Json_Text.Quoted (Score_Lead));

   Max_Recollection_Bytes : constant := 2 * (64 + Organs.Morag.Max_Hits
     * (32 + Organs.Morag.Max_Decimal_Bytes + Organs.Morag.Max_Score_Bytes));
   --  The lead and the closing, and each hit: ,{"turn":T,"score":S}, each
   --  quote as two bytes at most

   subtype Recollection_Text is String (1 .. Max_Recollection_Bytes);

   --  {"mode":"relevance","hits":[{"turn":T,"score":S},...]}: the turns
   --  the recall drew on, best first, each score with three decimals as
   --  the recall's text gives it, as Plain (1 .. Plain_Last), and quoted
   --  once as Quoted (1 .. Quoted_Last), both in one pass
   procedure Write_Recollection
     (Trace       : Turn_Cycle.Turn_Trace;
      Plain       : out Recollection_Text;
      Plain_Last  : out Natural;
      Quoted      : out Recollection_Text;
      Quoted_Last : out Natural)
   is
      procedure Put (Part, Quoted_Part : String) with Inline is
         --  Within both texts by Max_Recollection_Bytes, Trace's hits
         --  being at most Max_Hits
         pragma Suppress (Index_Check);
         pragma Suppress (Length_Check);
         pragma Suppress (Overflow_Check);
         pragma Suppress (Range_Check);
      begin
         Plain (Plain_Last + 1 .. Plain_Last + Part'Length) := Part;
         Plain_Last := Plain_Last + Part'Length;
         Quoted (Quoted_Last + 1 .. Quoted_Last + Quoted_Part'Length) :=
           Quoted_Part;
         Quoted_Last := Quoted_Last + Quoted_Part'Length;
      end Put;

      --  The number just written to Plain from Start on, copied to Quoted
      procedure Copy_Number (Start : Natural) with Inline is
      begin
         Put ("", Plain (Start + 1 .. Plain_Last));
      end Copy_Number;

   begin
      Plain_Last := 0;
      Quoted_Last := 0;
      Put (Recollection_Lead, Quoted_Recollection_Lead);
      for Index in 1 .. Trace.Recall_Hit_Last loop
         declare
            Hit   : Organs.Morag.Hit renames Trace.Recall_Hits (Index);
            Start : Natural;
         begin
            if Index > 1 then
               Put (Next_Hit_Lead, Quoted_Next_Hit_Lead);
            else
               Put (First_Hit_Lead, Quoted_First_Hit_Lead);
            end if;
            Start := Plain_Last;
            Organs.Morag.Put_Decimal (Plain, Plain_Last, Hit.Turn);
            Copy_Number (Start);
            Put (Score_Lead, Quoted_Score_Lead);
            Start := Plain_Last;
            Organs.Morag.Put_Score (Plain, Plain_Last, Hit.Score);
            Copy_Number (Start);
            Put ("}", "}");
         end;
      end loop;
      Put ("]}", "]}");
   end Write_Recollection;

   type Word_List is array (Positive range <>) of Name_Text;

   Thinker_Names : constant Word_List :=
     [Named ("stub"), Named ("sampling")];
   --  Which cognition thought: the stub's, or the client's model; the last
   --  is the one a sampling body requests

   Status_Words : constant array (Organs.Model_Port.Ask_Status) of Name_Text :=
     [for Status in Organs.Model_Port.Ask_Status =>
        Named (Organs.Model_Port.Status_Name (Status))];
   --  Made once: every call of every sampled turn names its status

   function Status_Word (Status : Organs.Model_Port.Ask_Status) return Name_Text
   is (Status_Words (Status));

   Ask_Status_Names : constant Word_List :=
     [for Index in 1 .. Organs.Model_Port.Ask_Status'Pos
                          (Organs.Model_Port.Ask_Status'Last) + 1 =>
        Status_Word (Organs.Model_Port.Ask_Status'Val (Index - 1))];

   type Account_Field is
     (Requested_Account, Thinker_Account, Fallback_Account, Calls_Account,
      Budget_Account, Intent_Account);
   --  Intent_Account: in the results of a body whose intender asks the
   --  model alone (--intent model)

   subtype Thinking_Field is
     Account_Field range Requested_Account .. Budget_Account;
   --  The Account of a body whose intent the rules state

   function Account_Field_Name (Field : Account_Field) return String is
     (case Field is
         when Requested_Account => "requested",
         when Thinker_Account => "thinker",
         when Fallback_Account => "fallback",
         when Calls_Account => "calls",
         when Budget_Account => "budget",
         when Intent_Account => "intent");

   ---------------------------------------------------------------------
   --  The intent's statement (--intent model): who named the intent, what
   --  the model said, and why the rules named it instead

   type Intent_Field is (Stated_By_Intent, Said_Intent, Fallback_Intent);

   function Intent_Field_Name (Field : Intent_Field) return String is
     (case Field is
         when Stated_By_Intent => "stated_by",
         when Said_Intent => "said",
         when Fallback_Intent => "fallback");

   function Source_Name (Source : Organs.Intender.Intent_Source)
     return String is
     (case Source is
         when Organs.Intender.Rules => "rules",
         when Organs.Intender.Model => "model");

   Source_Names : constant Word_List :=
     [Named (Source_Name (Organs.Intender.Rules)),
      Named (Source_Name (Organs.Intender.Model))];

   function Intent_Fallback_Reason
     (Trace : Turn_Cycle.Turn_Trace) return String;
   --  Why the rules named the turn's intent, "" when the model did

   --  The turn's intent statement: {"stated_by":...,"said":...,
   --  "fallback":...}
   procedure Write_Intent_Statement
     (Json : in out Json_Text.Builder; Trace : Turn_Cycle.Turn_Trace)
   is
   begin
      Json.Start_Object;
      for Field in Intent_Field loop
         Json.Key (Intent_Field_Name (Field));
         case Field is
            when Stated_By_Intent =>
               Json.Text (Source_Name (Trace.Intent_Source));
            when Said_Intent =>
               if Organs.Texts.Is_Empty (Trace.Intent_Said) then
                  Json.Raw ("null");
               else
                  Json.Text (Turn_Cycle.Text_Of (Trace, Trace.Intent_Said));
               end if;
            when Fallback_Intent =>
               if Trace.Intent_Source = Organs.Intender.Model then
                  Json.Raw ("null");
               else
                  Json.Text (Intent_Fallback_Reason (Trace));
               end if;
         end case;
      end loop;
      Json.End_Object;
   end Write_Intent_Statement;

   --  Budget (--energy budget): the session's model budget as the turn
   --  found it and what the turn spent of it; null without a budget

   type Budget_Field is
     (Calls_Limit_Budget, Tokens_Limit_Budget, Window_Budget,
      Calls_Used_Budget, Tokens_Used_Budget, Calls_Left_Budget,
      Turn_Calls_Budget, Turn_Tokens_Budget);
   --  The members of a budget, in the order written, all required

   function Budget_Field_Name (Field : Budget_Field) return String is
     (case Field is
         when Calls_Limit_Budget => "calls_limit",
         when Tokens_Limit_Budget => "tokens_limit",
         when Window_Budget => "window_s",
         when Calls_Used_Budget => "calls_used",
         when Tokens_Used_Budget => "tokens_used",
         when Calls_Left_Budget => "calls_left",
         when Turn_Calls_Budget => "turn_calls",
         when Turn_Tokens_Budget => "turn_tokens");

   procedure Write_Budget
     (Json : in out Json_Text.Builder; Trace : Turn_Cycle.Turn_Trace)
   with Pre => Trace.Budget.Metered;

   type Call_Field is
     (Step_Call, Thinker_Call, Status_Call, Model_Call, Tokens_Call,
      Latency_Call, Error_Call);
   --  The members of one model call, in the order written, all required

   function Call_Field_Name (Field : Call_Field) return String is
     (case Field is
         when Step_Call => "step",
         when Thinker_Call => "thinker",
         when Status_Call => "status",
         when Model_Call => "model",
         when Tokens_Call => "tokens",
         when Latency_Call => "latency_ms",
         when Error_Call => "error");

   function Fallback_Reason (Why : Organs.Model_Port.Reach) return String is
     (case Why is
         when Organs.Model_Port.Reachable => "",
         when Organs.Model_Port.No_Capability =>
           "the client did not declare capabilities.sampling",
         when Organs.Model_Port.Budget_Spent =>
           "the session's model budget has no call left: the stub thought"
           & " (no model call)");

   function Intent_Fallback_Reason
     (Trace : Turn_Cycle.Turn_Trace) return String
   is
      --  The intent's call, when it was asked
      function Intent_Call return Organs.Model_Port.Answer_Facts is
      begin
         for Index in 1 .. Trace.Call_Last loop
            if Cycle_Order."=" (Cycle_Order.Phase (Trace.Calls (Index).Step),
                                Cycle_Order.Intend)
            then
               return Trace.Calls (Index).Call.Facts;
            end if;
         end loop;
         return Facts : Organs.Model_Port.Answer_Facts do
            Organs.Model_Port.Clear (Facts);
         end return;
      end Intent_Call;
   begin
      case Trace.Intent_Fallback is
         when Organs.Intender.No_Fallback =>
            return "";
         when Organs.Intender.Unreachable =>
            return Fallback_Reason (Trace.Reach);
         when Organs.Intender.Unanswered =>
            declare
               Facts : constant Organs.Model_Port.Answer_Facts := Intent_Call;
            begin
               return "the model gave no answer to the intent question ("
                 & Organs.Model_Port.Status_Name (Facts.Status) & ": "
                 & Organs.Model_Port.Error_Of (Facts) & ")";
            end;
         when Organs.Intender.Outside_Set =>
            return "the model's answer names none of the intents offered";
      end case;
   end Intent_Fallback_Reason;

   No_Thought_Reason : constant String :=
     "the model answered none of the turn's questions: it gave no thought";

   --  The turn's Account: the cognition requested, the one that thought,
   --  why it fell back (or null), and every model call, in step order
   procedure Write_Account
     (Json : in out Json_Text.Builder; Trace : Turn_Cycle.Turn_Trace)
   is
      use type Organs.Model_Port.Reach;
      Asked : constant Boolean :=
        (for some Index in 1 .. Trace.Call_Last =>
           Trace.Calls (Index).Call.Asked);
   begin
      Json.Start_Object;
      for Field in Account_Field loop
         exit when Field = Intent_Account and then not Trace.Intent_Asked;
         Json.Key (Account_Field_Name (Field));
         case Field is
            when Requested_Account =>
               Json.Text (Thinker_Names (Thinker_Names'Last).all);
            when Thinker_Account =>
               Json.Text (Thinker_Names (if Asked then 2 else 1).all);
            when Fallback_Account =>
               if Trace.Reach /= Organs.Model_Port.Reachable then
                  Json.Text (Fallback_Reason (Trace.Reach));
               elsif Turn_Cycle.Got_No_Thought (Trace) then
                  Json.Text (No_Thought_Reason);
               else
                  Json.Raw ("null");
               end if;
            when Calls_Account =>
               Json.Start_Array;
               for Index in 1 .. Trace.Call_Last loop
                  if Trace.Calls (Index).Call.Asked then
                     Write_Call (Json, Trace.Calls (Index));
                  end if;
               end loop;
               Json.End_Array;
            when Intent_Account =>
               Write_Intent_Statement (Json, Trace);
            when Budget_Account =>
               if Trace.Budget.Metered then
                  Write_Budget (Json, Trace);
               else
                  Json.Raw ("null");
               end if;
         end case;
      end loop;
      Json.End_Object;
   end Write_Account;

   procedure Write_Budget
     (Json : in out Json_Text.Builder; Trace : Turn_Cycle.Turn_Trace)
   is
      Budget : Organs.Drive_Box.Budget_View renames Trace.Budget;

      procedure Int (Value : Natural) is
      begin
         Json.Int (Long_Long_Integer (Value));
      end Int;
   begin
      Json.Start_Object;
      for Field in Budget_Field loop
         Json.Key (Budget_Field_Name (Field));
         case Field is
            when Calls_Limit_Budget => Int (Budget.Calls_Limit);
            when Tokens_Limit_Budget =>
               if Budget.Tokens_Limit = 0 then
                  Json.Raw ("null");
               else
                  Int (Budget.Tokens_Limit);
               end if;
            when Window_Budget => Int (Budget.Window_S);
            when Calls_Used_Budget => Int (Budget.Calls_Used);
            when Tokens_Used_Budget => Int (Budget.Tokens_Used);
            when Calls_Left_Budget =>
               Int (Natural'Min (Trace.Calls_Left, Budget.Calls_Limit));
            when Turn_Calls_Budget => Int (Trace.Used.Calls);
            when Turn_Tokens_Budget => Int (Trace.Used.Tokens);
         end case;
      end loop;
      Json.End_Object;
   end Write_Budget;

   procedure Write_Call
     (Json : in out Json_Text.Builder; Call : Turn_Cycle.Call_Trace)
   is
      Facts : Organs.Model_Port.Answer_Facts renames Call.Call.Facts;
   begin
      Json.Start_Object;
      for Field in Call_Field loop
         Json.Key (Call_Field_Name (Field));
         case Field is
            when Step_Call => Json.Int (Long_Long_Integer (Call.Step));
            when Thinker_Call => Json.Text (Thinker_Names (2).all);
            when Status_Call => Json.Text (Status_Word (Facts.Status).all);
            when Model_Call => Json.Text (Organs.Model_Port.Model_Of (Facts));
            when Tokens_Call =>
               if Facts.Has_Tokens then
                  Json.Int (Long_Long_Integer (Facts.Tokens));
               else
                  Json.Raw ("null");
               end if;
            when Latency_Call =>
               Json.Int (Long_Long_Integer ((Facts.Latency_Us + 500) / 1000));
            when Error_Call =>
               if Facts.Error_Last = 0 then
                  Json.Raw ("null");
               else
                  Json.Text (Organs.Model_Port.Error_Of (Facts));
               end if;
         end case;
      end loop;
      Json.End_Object;
   end Write_Call;

   function Account_Image (Trace : Turn_Cycle.Turn_Trace) return String is
      Json : Json_Text.Builder;
   begin
      Write_Account (Json, Trace);
      return Json.Image;
   end Account_Image;

   type Step_Field is (Index_Field, Name_Field, Organ_Field, Status_Field, Detail_Field);
   --  The members of a step, in the order a step is written; all but
   --  detail (a skipped step has none) are required

   function Field_Name (Field : Step_Field) return String is
     (case Field is
         when Index_Field => "index",
         when Name_Field => "name",
         when Organ_Field => "organ",
         when Status_Field => "status",
         when Detail_Field => "detail");

   --  The members of Members from First on that share its group: the
   --  whole run, when it is a group's, else First alone
   function Run_Last (Members : Member_List; First : Positive) return Positive
   is
      Last : Positive := First;
   begin
      if Members (First).Group /= Result then
         while Last < Members'Last
           and then Members (Last + 1).Group = Members (First).Group
         loop
            Last := Last + 1;
         end loop;
      end if;
      return Last;
   end Run_Last;

   function Is_Read (M : Member) return Boolean is
     (M.Name /= null
      and then (case M.Kind is
                   when Text => M.Text_Of /= null,
                   when Choice => M.Choice_Of /= null,
                   when Fraction => M.Fraction_Of /= null,
                   when Count => M.Count_Of /= null,
                   when Pass_Total | Steps | Names | Given_Text | Account
                      | Recollection =>
                     True));

   function Is_Well_Formed (Members : Member_List) return Boolean is
     ((for all M of Members => Is_Read (M))
      and then (for all I in Members'Range =>
        (for all J in I + 1 .. Members'Last =>
           (if Members (J).Group = Members (I).Group
              and then Members (I).Group /= Result
            then (for all K in I .. J => Members (K).Group = Members (I).Group))
           and then
           (if Members (J).Group = Members (I).Group
            then Members (J).Name.all /= Members (I).Name.all)))
      and then (for all M of Members =>
                 M.Group = Result or else Group_Name (M.Group) /= ""));

   function Summary_Of (Members : Member_List) return Member_List is
      Count : Natural := 0;
   begin
      for M of Members loop
         if M.Part = In_Summary then
            Count := Count + 1;
         end if;
      end loop;
      return Summary : Member_List (1 .. Count) do
         Count := 0;
         for M of Members loop
            if M.Part = In_Summary then
               Count := Count + 1;
               Summary (Count) := M;
            end if;
         end loop;
      end return;
   end Summary_Of;

   --  Call Process with the members the text block of Identity's results
   --  copies: the full block is Members itself, passed without a copy, for
   --  it is filled on every turn
   procedure With_Text_Copy
     (Identity : Result_Identity;
      Members  : Member_List;
      Process  : not null access procedure (Copy : Member_List)) is
   begin
      case Identity.Text_Block is
         when Body_Config.Full => Process (Members);
         when Body_Config.Compact => Process (Summary_Of (Members));
      end case;
   end With_Text_Copy;

   function Holes_Per_Copy (Members : Member_List) return Natural is
      Holes : Natural := 0;
   begin
      for M of Members loop
         case M.Kind is
            when Text | Choice | Fraction | Count | Given_Text | Account
               | Recollection =>
               Holes := Holes + 1;
            when Steps => Holes := Holes + Natural (Cycle_Order.Step_Index'Last);
            when Pass_Total | Names => null;
         end case;
      end loop;
      return Holes;
   end Holes_Per_Copy;

   --  {"type":"object","properties":{...},"required":[...],
   --  "additionalProperties":false} around what Properties and Required
   --  write
   generic
      with procedure Properties (Json : in out Json_Text.Builder);
      with procedure Required (Json : in out Json_Text.Builder);
   procedure Write_Object_Schema (Json : in out Json_Text.Builder);

   procedure Write_Object_Schema (Json : in out Json_Text.Builder) is
   begin
      Json.Start_Object;
      Json.Text_Field ("type", "object");
      Json.Key ("properties");
      Json.Start_Object;
      Properties (Json);
      Json.End_Object;
      Json.Key ("required");
      Json.Start_Array;
      Required (Json);
      Json.End_Array;
      Json.Bool_Field ("additionalProperties", False);
      Json.End_Object;
   end Write_Object_Schema;

   procedure Write_Type (Json : in out Json_Text.Builder; Name : String) is
   begin
      Json.Start_Object;
      Json.Text_Field ("type", Name);
      Json.End_Object;
   end Write_Type;

   procedure Write_Whole_Range
     (Json : in out Json_Text.Builder; Low : Natural; High : Natural := 0) is
   begin
      Json.Start_Object;
      Json.Text_Field ("type", "integer");
      Json.Int_Field ("minimum", Long_Long_Integer (Low));
      if High > 0 then
         Json.Int_Field ("maximum", Long_Long_Integer (High));
      end if;
      Json.End_Object;
   end Write_Whole_Range;

   procedure Write_Step_Schema (Json : in out Json_Text.Builder) is
      procedure Properties (Json : in out Json_Text.Builder) is
      begin
         for Field in Step_Field loop
            Json.Key (Field_Name (Field));
            case Field is
               when Index_Field =>
                  Write_Whole_Range
                    (Json, 1, Natural (Cycle_Order.Step_Index'Last));
               when Name_Field | Organ_Field | Detail_Field =>
                  Write_Type (Json, "string");
               when Status_Field =>
                  Json.Start_Object;
                  Json.Key ("enum");
                  Json.Start_Array;
                  for Each in Turn_Cycle.Step_Status loop
                     Json.Text (Status_Name (Each));
                  end loop;
                  Json.End_Array;
                  Json.End_Object;
            end case;
         end loop;
      end Properties;

      procedure Required (Json : in out Json_Text.Builder) is
      begin
         for Field in Step_Field range Index_Field .. Status_Field loop
            Json.Text (Field_Name (Field));
         end loop;
      end Required;

      procedure Write is new Write_Object_Schema (Properties, Required);
   begin
      Write (Json);
   end Write_Step_Schema;

   --  {"enum":[...]} of Names
   procedure Write_Enum (Json : in out Json_Text.Builder; Names : Word_List) is
   begin
      Json.Start_Object;
      Json.Key ("enum");
      Json.Start_Array;
      for Name of Names loop
         Json.Text (Name.all);
      end loop;
      Json.End_Array;
      Json.End_Object;
   end Write_Enum;

   --  {"type":[Kind,"null"]}: a value or null
   procedure Write_Nullable (Json : in out Json_Text.Builder; Kind : String) is
   begin
      Json.Start_Object;
      Json.Key ("type");
      Json.Start_Array;
      Json.Text (Kind);
      Json.Text ("null");
      Json.End_Array;
      Json.End_Object;
   end Write_Nullable;

   --  The schema of an object whose members are Field's values, in order,
   --  all of them required, nothing else allowed
   generic
      type Field is (<>);
      with function Field_Name (Each : Field) return String;
      with procedure Write_Field_Schema
        (Json : in out Json_Text.Builder; Each : Field);
   procedure Write_Record_Schema (Json : in out Json_Text.Builder);

   procedure Write_Record_Schema (Json : in out Json_Text.Builder) is
      procedure Properties (Json : in out Json_Text.Builder) is
      begin
         for Each in Field loop
            Json.Key (Field_Name (Each));
            Write_Field_Schema (Json, Each);
         end loop;
      end Properties;

      procedure Required (Json : in out Json_Text.Builder) is
      begin
         for Each in Field loop
            Json.Text (Field_Name (Each));
         end loop;
      end Required;

      procedure Write is new Write_Object_Schema (Properties, Required);
   begin
      Write (Json);
   end Write_Record_Schema;

   procedure Write_Call_Field_Schema
     (Json : in out Json_Text.Builder; Field : Call_Field) is
   begin
      case Field is
         when Step_Call =>
            Write_Whole_Range (Json, 1, Natural (Cycle_Order.Step_Index'Last));
         when Thinker_Call =>
            Write_Enum (Json, Thinker_Names);
         when Status_Call =>
            Write_Enum (Json, Ask_Status_Names);
         when Model_Call =>
            Write_Type (Json, "string");
         when Tokens_Call =>
            Write_Nullable (Json, "integer");
         when Latency_Call =>
            Write_Whole_Range (Json, 0);
         when Error_Call =>
            Write_Nullable (Json, "string");
      end case;
   end Write_Call_Field_Schema;

   procedure Write_Call_Schema is new Write_Record_Schema
     (Call_Field, Call_Field_Name, Write_Call_Field_Schema);

   procedure Write_Intent_Field_Schema
     (Json : in out Json_Text.Builder; Field : Intent_Field) is
   begin
      case Field is
         when Stated_By_Intent =>
            Write_Enum (Json, Source_Names);
         when Said_Intent | Fallback_Intent =>
            Write_Nullable (Json, "string");
      end case;
   end Write_Intent_Field_Schema;

   procedure Write_Intent_Schema is new Write_Record_Schema
     (Intent_Field, Intent_Field_Name, Write_Intent_Field_Schema);

   procedure Write_Budget_Field_Schema
     (Json : in out Json_Text.Builder; Field : Budget_Field) is
   begin
      case Field is
         when Calls_Limit_Budget =>
            --  The least budget of either intender (the model's intent
            --  adds a call to a full turn)
            Write_Whole_Range
              (Json, Energy_Gate.Full_Turn_Calls (Asks_Intent => False));
         when Tokens_Limit_Budget =>
            Write_Nullable (Json, "integer");
         when Window_Budget =>
            Write_Whole_Range (Json, 1);
         when Calls_Used_Budget | Tokens_Used_Budget | Calls_Left_Budget
            | Turn_Calls_Budget | Turn_Tokens_Budget =>
            Write_Whole_Range (Json, 0);
      end case;
   end Write_Budget_Field_Schema;

   procedure Write_Budget_Schema is new Write_Record_Schema
     (Budget_Field, Budget_Field_Name, Write_Budget_Field_Schema);

   procedure Write_Account_Field_Schema
     (Json         : in out Json_Text.Builder;
      Field        : Account_Field;
      Intent_Asked : Boolean) is
   begin
      case Field is
         when Requested_Account =>
            Write_Enum (Json, [Thinker_Names (Thinker_Names'Last)]);
         when Thinker_Account =>
            Write_Enum (Json, Thinker_Names);
         when Fallback_Account =>
            Write_Nullable (Json, "string");
         when Calls_Account =>
            Json.Start_Object;
            Json.Text_Field ("type", "array");
            Json.Int_Field
              ("maxItems",
               Long_Long_Integer
                 (Energy_Gate.Full_Turn_Calls (Intent_Asked)));
            Json.Key ("items");
            Write_Call_Schema (Json);
            Json.End_Object;
         when Intent_Account =>
            Write_Intent_Schema (Json);
         when Budget_Account =>
            --  A budget, or null without one
            Json.Start_Object;
            Json.Key ("anyOf");
            Json.Start_Array;
            Write_Type (Json, "null");
            Write_Budget_Schema (Json);
            Json.End_Array;
            Json.End_Object;
      end case;
   end Write_Account_Field_Schema;

   procedure Write_Thinking_Field_Schema
     (Json : in out Json_Text.Builder; Field : Account_Field) is
   begin
      Write_Account_Field_Schema (Json, Field, Intent_Asked => False);
   end Write_Thinking_Field_Schema;

   procedure Write_Stating_Field_Schema
     (Json : in out Json_Text.Builder; Field : Account_Field) is
   begin
      Write_Account_Field_Schema (Json, Field, Intent_Asked => True);
   end Write_Stating_Field_Schema;

   procedure Write_Account_Schema is new Write_Record_Schema
     (Thinking_Field, Account_Field_Name, Write_Thinking_Field_Schema);
   --  The Account of a body whose intent the rules state

   procedure Write_Stating_Account_Schema is new Write_Record_Schema
     (Account_Field, Account_Field_Name, Write_Stating_Field_Schema);
   --  The Account of a body whose intender asks the model

   --  A Recollection: {"mode":"relevance","hits":[{"turn","score"}...]}
   procedure Write_Recollection_Schema (Json : in out Json_Text.Builder) is
      procedure Hit_Properties (Json : in out Json_Text.Builder) is
      begin
         Json.Key ("turn");
         Write_Whole_Range (Json, 1);
         Json.Key ("score");
         Json.Start_Object;
         Json.Text_Field ("type", "number");
         Json.Int_Field ("minimum", 0);
         Json.End_Object;
      end Hit_Properties;

      procedure Hit_Required (Json : in out Json_Text.Builder) is
      begin
         Json.Text ("turn");
         Json.Text ("score");
      end Hit_Required;

      procedure Write_Hit is new Write_Object_Schema
        (Hit_Properties, Hit_Required);

      procedure Properties (Json : in out Json_Text.Builder) is
      begin
         Json.Key ("mode");
         Json.Start_Object;
         Json.Key ("enum");
         Json.Start_Array;
         Json.Text (Recall_Mode);
         Json.End_Array;
         Json.End_Object;
         Json.Key ("hits");
         Json.Start_Object;
         Json.Text_Field ("type", "array");
         Json.Int_Field ("maxItems", Organs.Morag.Max_Hits);
         Json.Key ("items");
         Write_Hit (Json);
         Json.End_Object;
      end Properties;

      procedure Required (Json : in out Json_Text.Builder) is
      begin
         Json.Text ("mode");
         Json.Text ("hits");
      end Required;

      procedure Write is new Write_Object_Schema (Properties, Required);
   begin
      Write (Json);
   end Write_Recollection_Schema;

   procedure Write_Kind_Schema
     (Json : in out Json_Text.Builder; Kind : Value_Kind; Intent_Asked : Boolean)
   is
      Steps_Count : constant Long_Long_Integer :=
        Long_Long_Integer (Cycle_Order.Step_Index'Last);
   begin
      case Kind is
         when Text | Given_Text =>
            Write_Type (Json, "string");
         when Choice =>
            Json.Start_Object;
            Json.Key ("enum");
            Json.Start_Array;
            for Intent in Organs.Intent_Kind loop
               Json.Text (Organs.Intent_Name (Intent));
            end loop;
            Json.End_Array;
            Json.End_Object;
         when Fraction =>
            Json.Start_Object;
            Json.Text_Field ("type", "number");
            Json.Int_Field ("minimum", 0);
            Json.Int_Field ("maximum", 1);
            Json.End_Object;
         when Count =>
            Write_Whole_Range (Json, 1);
         when Pass_Total =>
            Write_Whole_Range (Json, 1, Energy_Gate.Pass_Count'Last);
         when Steps =>
            Json.Start_Object;
            Json.Text_Field ("type", "array");
            Json.Int_Field ("minItems", Steps_Count);
            Json.Int_Field ("maxItems", Steps_Count);
            Json.Key ("items");
            Write_Step_Schema (Json);
            Json.End_Object;
         when Names =>
            Json.Start_Object;
            Json.Text_Field ("type", "array");
            Json.Key ("items");
            Write_Type (Json, "string");
            Json.Int_Field ("minItems", 3);
            Json.Int_Field ("maxItems", 3);
            Json.End_Object;
         when Account =>
            if Intent_Asked then
               Write_Stating_Account_Schema (Json);
            else
               Write_Account_Schema (Json);
            end if;
         when Recollection =>
            Write_Recollection_Schema (Json);
      end case;
   end Write_Kind_Schema;

   --  The schema of Members (First .. Last), one object's members: a
   --  group's run within the result is written as an object of its own
   procedure Write_Members_Schema
     (Json : in out Json_Text.Builder; Members : Member_List;
      First, Last : Positive; Within_Group : Boolean; Sampled : Boolean;
      Intent_Asked : Boolean; Ranked : Boolean)
   is
      procedure Properties (Json : in out Json_Text.Builder) is
         At_Member : Positive := First;
      begin
         while At_Member <= Last loop
            declare
               Run : constant Positive :=
                 (if Within_Group then At_Member
                  else Run_Last (Members, At_Member));
               M   : Member renames Members (At_Member);
            begin
               if not Is_Shown (M, Sampled, Ranked) then
                  null;
               elsif Within_Group or else M.Group = Result then
                  Json.Key (M.Name.all);
                  Write_Kind_Schema (Json, M.Kind, Intent_Asked);
               else
                  Json.Key (Group_Name (M.Group));
                  Write_Members_Schema
                    (Json, Members, At_Member, Run, True, Sampled,
                     Intent_Asked, Ranked);
               end if;
               At_Member := Run + 1;
            end;
         end loop;
      end Properties;

      procedure Required (Json : in out Json_Text.Builder) is
         At_Member : Positive := First;
      begin
         while At_Member <= Last loop
            declare
               M : Member renames Members (At_Member);
            begin
               if not Is_Shown (M, Sampled, Ranked) then
                  At_Member := At_Member + 1;
               elsif Within_Group or else M.Group = Result then
                  if M.Kind /= Given_Text then
                     Json.Text (M.Name.all);
                  end if;
                  At_Member := At_Member + 1;
               else
                  Json.Text (Group_Name (M.Group));
                  At_Member := Run_Last (Members, At_Member) + 1;
               end if;
            end;
         end loop;
      end Required;

      procedure Write is new Write_Object_Schema (Properties, Required);
   begin
      Write (Json);
   end Write_Members_Schema;

   procedure Write_Output_Schema
     (Json         : in out Json_Text.Builder;
      Members      : Member_List := Result_Members;
      Sampled      : Boolean := False;
      Intent_Asked : Boolean := False;
      Ranked       : Boolean := False)
   is
   begin
      Write_Members_Schema
        (Json, Members, Members'First, Members'Last, Within_Group => False,
         Sampled => Sampled, Intent_Asked => Intent_Asked, Ranked => Ranked);
   end Write_Output_Schema;

   procedure Set_Identity
     (Identity : in out Result_Identity;
      Chosen   : Organs.Sets.Organ_Set;
      Drawn    : Organs.Identity.Big_Three) is
   begin
      for Role in Organs.Identity.Role loop
         Identity.Roles (Role) :=
           new String'(Chosen.Identity.Role_Name (Role));
         Identity.Cards (Role) :=
           new String'(Chosen.Deck.Name (Drawn (Role)));
      end loop;
      Identity.Intent_Asked := Chosen.Intender.Asks_Model;
   end Set_Identity;

   procedure Set_Cognition
     (Identity : in out Result_Identity; Kind : Body_Config.Cognition_Kind)
   is
      use type Body_Config.Cognition_Kind;
   begin
      Identity.Sampled := Kind = Body_Config.Sampling;
   end Set_Cognition;

   procedure Set_Recall
     (Identity : in out Result_Identity; Kind : Body_Config.Recall_Kind)
   is
      use type Body_Config.Recall_Kind;
   begin
      Identity.Ranked := Kind = Body_Config.Relevance;
   end Set_Recall;

   procedure Set_Text_Block
     (Identity : in out Result_Identity; Form : Body_Config.Text_Block_Form)
   is
   begin
      Identity.Text_Block := Form;
   end Set_Text_Block;

   --  The structured result of every turn of Passes passes, with a hole for
   --  each value that changes from turn to turn, in the order of Members:
   --  the order Fill_Copy fills them in.
   procedure Write_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Passes   : Energy_Gate.Pass_Count;
      Members  : Member_List;
      Given    : Boolean)
   is
      use Json_Text;
      Open : Group_Kind := Result;
   begin
      Json.Start_Object;
      for M of Members loop
         if not Is_Shown (M, Identity.Sampled, Identity.Ranked)
           or else (M.Kind = Given_Text and then not Given)
         then
            goto Next_Member;  -- absent from this body's or this call's
         end if;
         if M.Group /= Open then
            if Open /= Result then
               Json.End_Object;
            end if;
            Open := M.Group;
            if Open /= Result then
               Json.Key (Group_Name (Open));
               Json.Start_Object;
            end if;
         end if;
         Json.Key (M.Name.all);
         case M.Kind is
            when Text | Choice | Given_Text =>
               Json.Hole (Text_Hole);
            when Fraction | Count =>
               Json.Hole (Number_Hole);
            when Pass_Total =>
               Json.Int (Long_Long_Integer (Passes));
            when Steps =>
               Json.Start_Array;
               for Step in Cycle_Order.Step_Index loop
                  Json.Start_Object;
                  for Field in Step_Field loop
                     case Field is
                        when Index_Field =>
                           Json.Int_Field (Field_Name (Field),
                                           Long_Long_Integer (Step));
                        when Name_Field =>
                           Json.Text_Field (Field_Name (Field),
                                            Cycle_Order.Name (Step));
                        when Organ_Field =>
                           Json.Text_Field (Field_Name (Field),
                                            Cycle_Order.Organ (Step));
                        when Status_Field =>
                           Json.Text_Field
                             (Field_Name (Field),
                              Status_Name
                                (if Turn_Cycle.Runs (Step, Passes)
                                 then Turn_Cycle.Ran else Turn_Cycle.Skipped));
                        when Detail_Field =>
                           if Turn_Cycle.Runs (Step, Passes) then
                              Json.Key (Field_Name (Field));
                              Json.Hole (Text_Hole);
                           end if;
                     end case;
                  end loop;
                  Json.End_Object;
               end loop;
               Json.End_Array;
            when Names =>
               Json.Start_Array;
               for Role in Organs.Identity.Role loop
                  declare
                     Name : constant Name_Access :=
                       (case M.List is
                           when Roles => Identity.Roles (Role),
                           when Cards => Identity.Cards (Role));
                  begin
                     Json.Text (Name.all);
                  end;
               end loop;
               Json.End_Array;
            when Account | Recollection =>
               Json.Hole (Raw_Hole);
         end case;
         <<Next_Member>>
      end loop;
      if Open /= Result then
         Json.End_Object;
      end if;
      Json.End_Object;
   end Write_Shape;

   procedure Write_Result_Shape
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Passes   : Energy_Gate.Pass_Count;
      Members  : Member_List := Result_Members;
      Given    : Boolean := False)
   is
      Quoted : Json_Text.Builder (Inside_String => True);

      procedure Write_Copy (Copy : Member_List) is
      begin
         Write_Shape (Quoted, Identity, Passes, Copy, Given);
      end Write_Copy;
   begin
      Json.Key ("content");
      Json.Start_Array;
      Json.Start_Object;
      Json.Text_Field ("type", "text");
      Json.Key ("text");
      Json.Start_Text;
      Json.Hole (Json_Text.Text_Hole);
      Json.Text_Part ([ASCII.LF, ASCII.LF]);
      With_Text_Copy (Identity, Members, Write_Copy'Access);
      Json.Document_Part (Quoted);
      Json.End_Text;
      Json.End_Object;
      Json.End_Array;
      Json.Key ("structuredContent");
      Write_Shape (Json, Identity, Passes, Members, Given);
      Json.Bool_Field ("isError", False);
   end Write_Result_Shape;

   procedure Fill_Result
     (Json     : in out Json_Text.Builder;
      Identity : Result_Identity;
      Trace    : Turn_Cycle.Turn_Trace;
      Members  : Member_List := Result_Members;
      Origin   : String := "")
   is
      --  Every text of the trace is read where it stands in its store
      procedure Fill_From (Bytes : String) is
         Plain : constant Boolean := Json_Bytes.Is_Plain (Bytes);
         --  One pass over every text of the turn: they are short and many,
         --  and nearly always hold nothing to escape

         procedure Fill_Part (Part : Turn_Cycle.Span) with Inline is
         begin
            Json.Fill_Text (Bytes (Part.First .. Part.Last), Plain);
         end Fill_Part;

         Ran_Details : Json_Text.Text_Spans
           (1 .. Natural (Cycle_Order.Step_Index'Last));
         Ran_Last    : Natural := 0;
         --  The details of the steps that ran, in order: both copies fill
         --  them with one call each

         Account_Text : constant String :=
           (if Identity.Sampled then Account_Image (Trace) else "");
         --  The Account's value, written once for both copies (a stub
         --  body's results have none)

         Recollection_Json   : Recollection_Text;
         Recollection_Last   : Natural := 0;
         Quoted_Recollection : Recollection_Text;
         Quoted_Last         : Natural := 0;
         --  Likewise the Recollection's, in both forms (a fixture recall's
         --  results have none)

         --  The values of one copy of Write_Shape's document, in its order
         procedure Fill_Copy (Copy : Member_List) is
         begin
            for M of Copy loop
               case M.Kind is
                  when Account =>
                     if Identity.Sampled then
                        Json.Fill_Raw (Account_Text);
                     end if;
                  when Recollection =>
                     if Identity.Ranked then
                        Json.Fill_Raw
                          (Recollection_Json (1 .. Recollection_Last),
                           Quoted_Recollection (1 .. Quoted_Last));
                     end if;
                  when Text =>
                     Fill_Part (M.Text_Of (Trace));
                  when Choice =>
                     --  An intent's name is a plain word
                     Json.Fill_Text
                       (Organs.Intent_Name (M.Choice_Of (Trace)),
                        Plain => True);
                  when Fraction =>
                     Json.Fill_Fraction
                       (Organs.To_Millis (M.Fraction_Of (Trace)));
                  when Count =>
                     Json.Fill_Count (M.Count_Of (Trace));
                  when Steps =>
                     Json.Fill_Texts
                       (Bytes, Ran_Details (1 .. Ran_Last), Plain);
                  when Given_Text =>
                     if Origin /= "" then
                        Json.Fill_Text (Origin, Json_Bytes.Is_Plain (Origin));
                     end if;
                  when Pass_Total | Names =>
                     null;
               end case;
            end loop;
         end Fill_Copy;
      begin
         if Identity.Ranked then
            Write_Recollection
              (Trace, Recollection_Json, Recollection_Last, Quoted_Recollection,
               Quoted_Last);
         end if;
         for Step of Trace.Steps loop
            if Step.Status = Turn_Cycle.Ran then
               Ran_Last := Ran_Last + 1;
               Ran_Details (Ran_Last) :=
                 (First => Step.Detail.First, Last => Step.Detail.Last);
            end if;
         end loop;
         Fill_Part (Trace.Output);
         With_Text_Copy (Identity, Members, Fill_Copy'Access);
         Fill_Copy (Members);
      end Fill_From;
   begin
      Organs.Texts.Read (Trace.Texts, Fill_From'Access);
   end Fill_Result;

end Turn_Tool;
