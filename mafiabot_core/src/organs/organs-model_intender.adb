with Ada.Strings.Unbounded;
with Monotonic;
with Organs.Mini_Rag;

package body Organs.Model_Intender is

   use type Organs.Model_Port.Reach;
   use type Organs.Model_Port.Ask_Status;

   package Texts renames Organs.Texts;
   package Intender renames Organs.Intender;

   function Intent_Prompt (Packed_Schema, Input : String) return String is
      use Ada.Strings.Unbounded;
      Offered : Unbounded_String;
      Names   : Unbounded_String;

      procedure Offer (Intent : Intent_Kind; Route : String) is
      begin
         Append (Offered, "- " & Intent_Name (Intent) & ": routed to "
                 & Route & ASCII.LF);
         Append (Names, (if Length (Names) = 0 then "" else ", ")
                 & Intent_Name (Intent));
      end Offer;
   begin
      Organs.Mini_Rag.For_Each_Intent (Packed_Schema, Offer'Access);
      return "The intents (each name, then the route the body's static table"
        & " gives it):" & ASCII.LF & To_String (Offered)
        & "The user's turn: " & Organs.Model_Port.Quoted_Input (Input)
        & ASCII.LF
        & "Which one intent has this turn? Answer with exactly one of these"
        & " names: " & To_String (Names) & ".";
   end Intent_Prompt;

   procedure Read_Answer
     (Answer        : String;
      Packed_Schema : String;
      Found         : out Boolean;
      Intent        : out Intent_Kind)
   is
      function Is_Blank (C : Character) return Boolean is
        (C in ' ' | ASCII.HT | ASCII.LF | ASCII.CR);

      First : Positive := Answer'First;
      Last  : Natural := Answer'Last;
   begin
      Found := False;
      Intent := Intent_Kind'First;
      while First <= Last and then Is_Blank (Answer (First)) loop
         First := First + 1;
      end loop;
      while Last >= First and then Is_Blank (Answer (Last)) loop
         Last := Last - 1;
      end loop;
      if Last >= First and then Answer (Last) = '.' then
         Last := Last - 1;
      end if;
      declare
         Word : constant String := Folded (Answer (First .. Last));

         procedure Match (Offered : Intent_Kind; Route : String) is
            pragma Unreferenced (Route);
         begin
            if not Found and then Word = Intent_Name (Offered) then
               Found := True;
               Intent := Offered;
            end if;
         end Match;
      begin
         Organs.Mini_Rag.For_Each_Intent (Packed_Schema, Match'Access);
      end;
   end Read_Answer;

   overriding procedure State_Intent
     (Self          : Organ;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Organs.Intender.Statement;
      Basis         : in out Organs.Texts.Store;
      Call          : out Organs.Model_Port.Call_Record)
   is
      --  The rules state the intent, for Why, said after their basis as
      --  Note; they are given a port that cannot ask, so the model is
      --  asked once a turn whatever the Fallback is
      procedure By_Rules
        (Why : Intender.Model_Fallback; Note : String; Said : String)
      is
         Nowhere : Organs.Model_Port.Unreachable
                     (Organs.Model_Port.No_Capability);
         Unasked : Organs.Model_Port.Call_Record;
      begin
         Self.Fallback.State_Intent
           (Input, Packed_Schema, Nowhere, Stated, Basis, Unasked);
         Stated.Source := Intender.Rules;
         Stated.Fallback := Why;
         Stated.Said (1 .. Said'Length) := Said;
         Stated.Said_Last := Said'Length;
         Texts.Add (Basis, Note);
      end By_Rules;
   begin
      if Port.Reach_Of /= Organs.Model_Port.Reachable then
         Call.Asked := False;
         Organs.Model_Port.Clear (Call.Facts);
         By_Rules (Intender.Unreachable, "; no model to ask", "");
         return;
      end if;
      declare
         Answer : Texts.Store (Intender.Max_Said_Bytes);
         Said   : Texts.Part;
         Found  : Boolean := False;
         Intent : Intent_Kind;
      begin
         Texts.Start_Part (Answer, Intender.Max_Said_Bytes);
         Call.Asked := True;
         Port.Ask (System_Prompt, Intent_Prompt (Packed_Schema, Input),
                   Max_Intent_Tokens, Monotonic.After (Self.Timeout_Ms),
                   Answer, Call.Facts);
         Texts.End_Part (Answer, Said);
         if Call.Facts.Status /= Organs.Model_Port.Answered then
            By_Rules (Intender.Unanswered, "; the model gave no answer", "");
            return;
         end if;
         declare
            Text : constant String := Texts.Text_Of (Answer, Said);
         begin
            Read_Answer (Text, Packed_Schema, Found, Intent);
            if Found then
               Stated := (Intent    => Intent,
                          Source    => Intender.Model,
                          Fallback  => Intender.No_Fallback,
                          Said      => <>,
                          Said_Last => Text'Length);
               Stated.Said (1 .. Text'Length) := Text;
               Texts.Add (Basis, "named by the model");
            else
               By_Rules
                 (Intender.Outside_Set, "; the model named no intent", Text);
            end if;
         end;
      end;
   end State_Intent;

end Organs.Model_Intender;
