with AUnit.Assertions;
with Json_Text;

package body Json_Text_Tests is

   use AUnit.Assertions;

   procedure Test_Quoting (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Assert (Json_Text.Quoted ("a""b\c") = """a\""b\\c""", "quotes and backslashes are escaped");
      Assert (Json_Text.Quoted ("x" & ASCII.LF & ASCII.NUL & ASCII.US) = """x\n\u0000\u001f""",
              "control characters are escaped");
      Assert (Json_Text.Quoted ("caf" & Character'Val (16#C3#) & Character'Val (16#A9#))
              = """caf" & Character'Val (16#C3#) & Character'Val (16#A9#) & """",
              "UTF-8 passes through as it is");
   end Test_Quoting;

   procedure Test_Fractions (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Assert (Json_Text.Fraction_Image (0) = "0.0", "zero");
      Assert (Json_Text.Fraction_Image (1000) = "1.0", "one");
      Assert (Json_Text.Fraction_Image (875) = "0.875", "three decimals");
      Assert (Json_Text.Fraction_Image (50) = "0.05", "trailing zeros dropped");
      Assert (Json_Text.Fraction_Image (5) = "0.005", "leading zeros kept");
   end Test_Fractions;

   procedure Test_Builder (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Json : Json_Text.Builder;
   begin
      Json.Start_Object;
      Json.Int_Field ("a", -3);
      Json.Key ("b");
      Json.Start_Array;
      Json.Int (1);
      Json.Start_Object;
      Json.End_Object;
      Json.Text ("x");
      Json.End_Array;
      Json.Raw_Field ("c", "12345678901234567890");
      Json.Bool_Field ("d", False);
      Json.End_Object;
      Assert (Json.Image = "{""a"":-3,""b"":[1,{},""x""],""c"":12345678901234567890,""d"":false}",
              "compact, commas only between items: " & Json.Image);
   end Test_Builder;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Quoting'Access, "strings are quoted as JSON requires");
      Register_Routine (T, Test_Fractions'Access, "fractions print with at most three decimals");
      Register_Routine (T, Test_Builder'Access, "the builder writes compact JSON");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Json_Text");
   end Name;

end Json_Text_Tests;
