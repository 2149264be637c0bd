with Utf8;

package body Organs.Model_Port is

   procedure Clear (Facts : out Answer_Facts) is
   begin
      Facts.Status := Failed;
      Facts.Model_Last := 0;
      Facts.Has_Tokens := False;
      Facts.Tokens := 0;
      Facts.Latency_Us := 0;
      Facts.Error_Last := 0;
   end Clear;

   --  Text into Room, cut on a character boundary to fit; Last says how
   --  much of Room it holds
   procedure Keep_Cut (Text : String; Room : out String; Last : out Natural)
   with Pre => Room'First = 1, Post => Last <= Room'Last
   is
   begin
      Last := Utf8.Prefix_Length (Text, Room'Length);
      Room (1 .. Last) := Text (Text'First .. Text'First + Last - 1);
   end Keep_Cut;

   function Quoted_Input (Input : String) return String is
      Kept : constant Natural :=
        Utf8.Prefix_Length (Input, Max_Quoted_Input_Bytes);
   begin
      return Input (Input'First .. Input'First + Kept - 1)
        & (if Kept < Input'Length then Organs.Texts.Cut_Mark else "");
   end Quoted_Input;

   procedure Set_Error (Facts : in out Answer_Facts; Error : String) is
   begin
      Keep_Cut (Error, Facts.Error, Facts.Error_Last);
   end Set_Error;

   procedure Set_Model (Facts : in out Answer_Facts; Model : String) is
   begin
      Keep_Cut (Model, Facts.Model, Facts.Model_Last);
   end Set_Model;

   overriding procedure Ask
     (Self          : in out Unreachable;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Answer_Facts)
   is
      pragma Unreferenced (Self, System_Prompt, Prompt, Max_Tokens, Deadline,
                           Answer);
   begin
      Clear (Facts);
      Set_Error (Facts, "no model to ask");
   end Ask;

end Organs.Model_Port;
