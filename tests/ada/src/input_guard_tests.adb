with AUnit.Assertions;
with Input_Guard;
with Utf8;

package body Input_Guard_Tests is

   use AUnit.Assertions;
   use Input_Guard;

   Limits : constant Input_Guard.Limits := (Max_Depth => 64, Max_Elements => 1000);

   function Bytes (Codes : String) return String is (Codes);

   function Char (Code : Natural) return String is
     ([1 => Character'Val (Code)]);

   procedure Expect (Line : String; Kind : Finding; Offset : Natural; What : String) is
      Got : constant Verdict := Inspect (Line, Limits);
   begin
      Assert (Got.Kind = Kind, What & ": expected " & Kind'Image & ", got " & Got.Kind'Image);
      Assert (Got.Offset = Offset,
              What & ": expected offset" & Offset'Image & ", got" & Got.Offset'Image);
   end Expect;

   procedure Test_Clean_Lines (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Expect ("{""jsonrpc"":""2.0"",""id"":1,""method"":""ping""}", Clean, 0, "plain request");
      Expect ("{""t"":""caf" & Char (16#C3#) & Char (16#A9#) & " "
              & Char (16#E2#) & Char (16#98#) & Char (16#83#) & " "
              & Char (16#F0#) & Char (16#9F#) & Char (16#98#) & Char (16#80#) & """}",
              Clean, 0, "two-, three- and four-byte characters");
      Expect ("{""t"":""\ud83d\ude00""}", Clean, 0, "a proper surrogate pair escape");
      Expect ("{""t"":""[[[[{{{{ \"" ]]""}", Clean, 0, "brackets and an escaped quote inside a string");
      Expect ("{""t"":""\\""}", Clean, 0, "an escaped backslash before the closing quote");
      Expect (Char (9) & "{}" & Char (13), Clean, 0, "control bytes outside strings are the parser's business");
   end Test_Clean_Lines;

   procedure Test_Invalid_Utf8 (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Expect ("{""a"":""" & Char (16#FF#) & """}", Invalid_Utf8, 7, "0xFF");
      Expect ("{""a"":""" & Char (16#C0#) & Char (16#AF#) & """}", Invalid_Utf8, 7, "overlong slash");
      Expect ("{""a"":""" & Char (16#E2#) & Char (16#82#) & """}", Invalid_Utf8, 7, "truncated three-byte sequence");
      Expect ("{""a"":""" & Char (16#ED#) & Char (16#A0#) & Char (16#80#) & """}", Invalid_Utf8, 7,
              "UTF-8 encoded surrogate U+D800");
      Expect ("{""a"":""" & Char (16#F4#) & Char (16#90#) & Char (16#80#) & Char (16#80#) & """}",
              Invalid_Utf8, 7, "code point above U+10FFFF");
      Expect (Char (16#80#) & "{}", Invalid_Utf8, 1, "stray continuation byte");
      Expect ("{}" & Char (16#E0#) & Char (16#80#) & Char (16#80#), Invalid_Utf8, 3, "overlong NUL");
      Expect ("{""a"":1}" & Char (16#C3#), Invalid_Utf8, 8, "sequence cut by the end of the line");
   end Test_Invalid_Utf8;

   procedure Test_Control_In_String (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Expect ("{""a"":""x" & Char (0) & """}", Control_In_String, 8, "raw NUL in a string");
      Expect ("{""a"":""" & Char (9) & """}", Control_In_String, 7, "raw tab in a string");
   end Test_Control_In_String;

   procedure Test_Lone_Surrogates (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Expect ("{""a"":""\ud800""}", Lone_Surrogate, 7, "high half alone");
      Expect ("{""a"":""\uDC00""}", Lone_Surrogate, 7, "low half alone, upper-case hex");
      Expect ("{""a"":""\ud800\u0041""}", Lone_Surrogate, 7, "high half followed by a non-surrogate");
      Expect ("{""a"":""x\ud800", Lone_Surrogate, 8, "high half cut by the end of the line");
      Expect ("{""a"":""\\ud800""}", Clean, 0, "an escaped backslash, not an escape");
   end Test_Lone_Surrogates;

   procedure Test_Depth_And_Elements (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Deep_Ok  : constant String := [1 .. 64 => '['] & [1 .. 64 => ']'];
      Too_Deep_Line : constant String := [1 .. 65 => '['] & [1 .. 65 => ']'];
      Wide     : constant String := "[" & [1 .. 1000 => ','] & "]";
   begin
      Expect (Deep_Ok, Clean, 0, "64 levels");
      Expect (Too_Deep_Line, Too_Deep, 65, "65 levels");
      Expect ([1 .. 100_000 => '['], Too_Deep, 65, "100k levels stop at the limit");
      Expect ("{""a"":[1,2]}" & [1 .. 70 => '{'], Too_Deep, 76,
              "closed brackets give their depth back");
      Expect (Wide, Too_Many_Elements, 1001, "the element past the cap is found");
   end Test_Depth_And_Elements;

   procedure Test_Helpers (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Snowmen : constant String := (Char (16#E2#) & Char (16#98#) & Char (16#83#)) & (Char (16#E2#) & Char (16#98#) & Char (16#83#));
   begin
      Assert (Utf8.Is_Valid (Snowmen), "two snowmen are valid");
      Assert (not Utf8.Is_Valid (Snowmen (1 .. 5)), "a cut snowman is not");
      Assert (Utf8.Is_Valid (""), "the empty text is valid");
      Assert (Utf8.Prefix_Length (Snowmen, 4) = 3, "a prefix never cuts a character");
      Assert (Utf8.Prefix_Length (Snowmen, 2) = 0, "nor keeps half of one");
      Assert (Utf8.Prefix_Length (Snowmen, 100) = 6, "a short text is kept whole");
      Assert (Utf8.Prefix_Length (Bytes ("abc"), 2) = 2, "ASCII is cut anywhere");
      --  A snowman after every run of ASCII, cut by every limit: the ASCII
      --  run is passed eight bytes at a time, so each place and limit is
      --  checked against a byte-by-byte count
      for Run in 0 .. 20 loop
         declare
            Text : constant String := [1 .. Run => 'a'] & Snowmen (1 .. 3) & "bc";
         begin
            for Limit in 0 .. Text'Length + 2 loop
               declare
                  Expected : constant Natural :=
                    (if Limit <= Run then Limit
                     elsif Limit < Run + 3 then Run
                     else Natural'Min (Limit, Text'Length));
               begin
                  Assert (Utf8.Prefix_Length (Text, Limit) = Expected,
                          "a snowman after" & Run'Image & " bytes, limit" & Limit'Image & ":"
                          & Utf8.Prefix_Length (Text, Limit)'Image);
               end;
            end loop;
         end;
      end loop;
   end Test_Helpers;

   --  One finding at every offset after a run of plain bytes, in a string
   --  and between strings: the guard passes plain runs eight bytes at a
   --  time, so each finding must be found where it is whatever its
   --  alignment, with clean bytes after it too.
   procedure Test_Findings_At_Every_Offset (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      type Case_Kind is (Control, Bad_Byte, Cut_Sequence, Surrogate, Good_Sequence, Escaped_Quote);
      function Inserted (Kind : Case_Kind) return String is
        (case Kind is
            when Control       => Char (1),
            when Bad_Byte      => Char (16#FF#),
            when Cut_Sequence  => Char (16#E2#) & Char (16#82#) & "z",
            when Surrogate     => "\udc00",
            when Good_Sequence => Char (16#E2#) & Char (16#98#) & Char (16#83#),
            when Escaped_Quote => "\""[{");
      Expected : constant array (Case_Kind) of Finding :=
        [Control => Control_In_String, Bad_Byte | Cut_Sequence => Invalid_Utf8,
         Surrogate => Lone_Surrogate, Good_Sequence | Escaped_Quote => Clean];
   begin
      for Kind in Case_Kind loop
         for Before in 0 .. 20 loop
            declare
               Head : constant String := "{""key"" :  ""input"":""" & [1 .. Before => 'a'];
               Line : constant String := Head & Inserted (Kind) & [1 .. 17 => 'b'] & """}";
            begin
               Expect (Line, Expected (Kind), (if Expected (Kind) = Clean then 0 else Head'Length + 1),
                       Kind'Image & " after" & Before'Image & " plain bytes");
            end;
         end loop;
      end loop;
      for Before in 0 .. 20 loop
         declare
            Blanks : constant String := [1 .. Before => ' '];
         begin
            Expect ("[" & Blanks & "1," & Blanks & "[" & Blanks & "2" & Blanks & "]" & Blanks & "]"
                    & Blanks & Char (16#C3#), Invalid_Utf8, 8 + 6 * Before,
                    "a cut sequence after" & Before'Image & " blanks between each bracket");
            Expect ([1 .. 64 => '['] & Blanks & "[", Too_Deep, 65 + Before,
                    "the 65th level after" & Before'Image & " blanks");
         end;
      end loop;
   end Test_Findings_At_Every_Offset;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Clean_Lines'Access, "clean lines pass");
      Register_Routine (T, Test_Findings_At_Every_Offset'Access, "a finding is found where it is at every offset");
      Register_Routine (T, Test_Invalid_Utf8'Access, "ill-formed UTF-8 is found at its first byte");
      Register_Routine (T, Test_Control_In_String'Access, "raw control bytes in strings are found");
      Register_Routine (T, Test_Lone_Surrogates'Access, "lone surrogate escapes are found");
      Register_Routine (T, Test_Depth_And_Elements'Access, "depth and element caps hold");
      Register_Routine (T, Test_Helpers'Access, "UTF-8 helpers never cut a character");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Input_Guard");
   end Name;

end Input_Guard_Tests;
