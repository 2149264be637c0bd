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

   --  Every byte at every offset of a run longer than the eight bytes the
   --  writer tests at once, against an escaper written the plain way.
   procedure Test_Quoting_At_Every_Offset (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Hex : constant String := "0123456789abcdef";

      function Escape_Of (C : Character) return String is
        (case C is
            when '"' => "\""",
            when '\' => "\\",
            when ASCII.LF => "\n",
            when ASCII.CR => "\r",
            when ASCII.HT => "\t",
            when ASCII.BS => "\b",
            when ASCII.FF => "\f",
            when others =>
              (if C < ' ' then "\u00" & Hex (Character'Pos (C) / 16 + 1) & Hex (Character'Pos (C) mod 16 + 1)
               else [1 => C]));

      function Plainly (Text : String) return String is
        (if Text = "" then "" else Escape_Of (Text (Text'First)) & Plainly (Text (Text'First + 1 .. Text'Last)));
   begin
      for Code in 0 .. 255 loop
         for Offset in 0 .. 20 loop
            declare
               Text : constant String :=
                 [1 .. Offset => 'a'] & Character'Val (Code) & [1 .. 9 => Character'Val (16#C3#)];
            begin
               Assert (Json_Text.Quoted (Text) = '"' & Plainly (Text) & '"',
                       "byte" & Code'Image & " after" & Offset'Image & " clean bytes");
            end;
         end loop;
      end loop;
   end Test_Quoting_At_Every_Offset;

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

   --  The same document, once plain and once Inside_String: the second must
   --  be exactly the first quoted as a JSON string's characters.
   procedure Test_Inside_String (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Plain  : Json_Text.Builder;
      Quoted : Json_Text.Builder (Inside_String => True);
      Tricky : constant String :=
        "say ""hi"" \ tab" & ASCII.HT & " nul" & ASCII.NUL & " lf" & ASCII.LF & " del" & Character'Val (127)
        & " caf" & Character'Val (16#C3#) & Character'Val (16#A9#);
      Head    : constant Json_Text.Object_Head :=
        Json_Text.To_Object_Head ("""m"":""a\""b"",""n"":[1,2]", "t");
      Value   : constant Json_Text.Fragment := Json_Text.To_Fragment ("{""v"":""\\""}");

      procedure Write (Json : in out Json_Text.Builder) is
      begin
         Json.Start_Object (Head);
         Json.Text (Tricky);
         Json.Key ("a");
         Json.Start_Array;
         Json.Raw (Value);
         Json.Raw ("{""r"":""x\""y""}");
         Json.Int (-42);
         Json.Bool (True);
         Json.Fraction (875);
         Json.Start_Text;
         Json.Text_Part ("part """);
         Json.Text_Part (Tricky);
         Json.End_Text;
         Json.End_Array;
         Json.Raw_Field ("s", """\n""");
         Json.End_Object;
      end Write;

      Reply : Json_Text.Builder;
   begin
      Write (Plain);
      Write (Quoted);
      Assert (Json_Text.Quoted (Plain.Image) = '"' & Quoted.Image & '"',
              "inside a string, the document is the plain one quoted: " & Quoted.Image);
      Reply.Start_Text;
      Reply.Text_Part_Document (Quoted);
      Reply.End_Text;
      Assert (Reply.Image = Json_Text.Quoted (Plain.Image),
              "a quoted document is copied into a text as it is");
      Reply.Reset;
      Reply.Start_Text;
      Reply.Text_Part_Document (Plain);
      Reply.End_Text;
      Assert (Reply.Image = Json_Text.Quoted (Plain.Image), "a plain document is quoted as it is copied");
   end Test_Inside_String;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Quoting'Access, "strings are quoted as JSON requires");
      Register_Routine (T, Test_Quoting_At_Every_Offset'Access, "every byte is quoted alike at every offset");
      Register_Routine (T, Test_Fractions'Access, "fractions print with at most three decimals");
      Register_Routine (T, Test_Builder'Access, "the builder writes compact JSON");
      Register_Routine (T, Test_Inside_String'Access, "a builder inside a string writes its document quoted");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Json_Text");
   end Name;

end Json_Text_Tests;
