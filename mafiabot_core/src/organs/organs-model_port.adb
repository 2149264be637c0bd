with Input_Guard;

package body Organs.Model_Port is

   procedure Set_Error (Facts : in out Answer_Facts; Error : String) is
      Kept : constant Natural :=
        Input_Guard.Utf8_Prefix_Length (Error, Max_Error_Bytes);
   begin
      Facts.Error (1 .. Kept) := Error (Error'First .. Error'First + Kept - 1);
      Facts.Error_Last := Kept;
   end Set_Error;

   procedure Set_Model (Facts : in out Answer_Facts; Model : String) is
      Kept : constant Natural :=
        Input_Guard.Utf8_Prefix_Length (Model, Max_Model_Bytes);
   begin
      Facts.Model (1 .. Kept) := Model (Model'First .. Model'First + Kept - 1);
      Facts.Model_Last := Kept;
   end Set_Model;

   overriding procedure Ask
     (Self          : in out Unreachable;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Ada.Real_Time.Time;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Answer_Facts)
   is
      pragma Unreferenced (Self, System_Prompt, Prompt, Max_Tokens, Deadline,
                           Answer);
   begin
      Facts := (others => <>);
      Set_Error (Facts, "no model to ask");
   end Ask;

end Organs.Model_Port;
