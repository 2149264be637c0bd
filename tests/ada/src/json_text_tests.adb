with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Json_Bytes;
with Json_Text;

package body Json_Text_Tests is

   use Ada.Strings.Unbounded;
   use AUnit.Assertions;

   Hex : constant String := "0123456789abcdef";

   --  JSON's escape of one character, written the plain way: the oracle the
   --  writer's fast paths are held to
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
      Result : Unbounded_String;
   begin
      for C of Text loop
         Append (Result, Escape_Of (C));
      end loop;
      return To_String (Result);
   end Plainly;

   --  A template of one text hole in each place a text hole is filled: a
   --  plain document, a quoted one, and the quoted one as part of a plain
   --  builder's text.  Member, if given, puts the hole in an object.
   type Hole_Templates is record
      Plain, Quoted, In_Text : Json_Text.Template;
   end record;

   function One_Hole (Member : String := "") return Hole_Templates is
      Plain, In_Text : Json_Text.Builder;
      Quoted : Json_Text.Builder (Inside_String => True);

      procedure Write (Json : in out Json_Text.Builder) is
      begin
         if Member = "" then
            Json.Hole (Json_Text.Text_Hole);
         else
            Json.Start_Object;
            Json.Key (Member);
            Json.Hole (Json_Text.Text_Hole);
            Json.End_Object;
         end if;
      end Write;
   begin
      Write (Plain);
      Write (Quoted);
      In_Text.Start_Text;
      In_Text.Document_Part (Quoted);
      In_Text.End_Text;
      return (Plain.To_Template, Quoted.To_Template, In_Text.To_Template);
   end One_Hole;

   procedure Free (Templates : in out Hole_Templates) is
   begin
      Json_Text.Free (Templates.Plain);
      Json_Text.Free (Templates.Quoted);
      Json_Text.Free (Templates.In_Text);
   end Free;

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

   --  The escaper's byte table and Json_Bytes' tests of many bytes at once
   --  spell one set: the bytes a JSON string cannot hold as they are
   procedure Test_One_Escape_Set (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for C in Character loop
         declare
            Escaped : constant Boolean := Json_Text.Quoted ([C]) /= '"' & C & '"';
            Run     : constant Json_Bytes.Eight_Bytes := [1 .. 7 => 'a'] & C;
         begin
            Assert (Json_Bytes.Is_Plain ([C]) = not Escaped,
                    "Is_Plain and the escaper disagree on byte" & Character'Pos (C)'Image);
            Assert (Json_Bytes.Is_Plain_Run (Run) = not Escaped,
                    "Is_Plain_Run and the escaper disagree on byte" & Character'Pos (C)'Image);
            Assert (Json_Text.Is_Plain ([C]) = not Escaped,
                    "Json_Text.Is_Plain and the escaper disagree on byte" & Character'Pos (C)'Image);
            --  The plain ASCII prefix ends at C, in every place, whatever
            --  follows it: plain bytes, or bytes that end a run themselves
            for Place in 1 .. 8 loop
               for After of String'("a" & ASCII.NUL & Character'Val (16#1F#) & '"' & '\'
                                    & Character'Val (16#80#) & Character'Val (16#FF#))
               loop
                  declare
                     Bytes    : constant Json_Bytes.Eight_Bytes :=
                       [1 .. Place - 1 => 'a'] & C & [Place + 1 .. 8 => After];
                     Ends_Run : constant Boolean := Escaped or else Character'Pos (C) >= 16#80#;
                     After_Plain : constant Boolean := After = 'a';
                     Expected : constant Natural :=
                       (if Ends_Run then Place - 1 elsif After_Plain or else Place = 8 then 8 else Place);
                  begin
                     Assert (Json_Bytes.Plain_Ascii_Prefix (Bytes) = Expected,
                             "Plain_Ascii_Prefix of byte" & Character'Pos (C)'Image & " in place" & Place'Image
                             & " before byte" & Character'Pos (After)'Image & ":"
                             & Json_Bytes.Plain_Ascii_Prefix (Bytes)'Image & ", not" & Expected'Image);
                  end;
               end loop;
            end loop;
         end;
      end loop;
   end Test_One_Escape_Set;

   --  A fraction as Fill_Fraction writes it into a number hole, against
   --  literals and, for every value, against a spelling the writer does not
   --  share: a decimal fixed point image, its trailing zeros dropped down
   --  to one
   procedure Test_Fractions (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      type Thousandths is delta 0.001 digits 4;
      Skeleton : Json_Text.Builder;
      Pattern  : Json_Text.Template;

      function Spelled (Value : Json_Text.Millis) return String is
         Filled : Json_Text.Builder;
      begin
         Filled.Start_Filling (Pattern);
         Filled.Fill_Fraction (Value);
         Assert (not Filled.Is_Filling, "the number hole is filled");
         --  Within the array's brackets
         return Filled.Image (2 .. Filled.Length - 1);
      end Spelled;

      function Independently (Value : Json_Text.Millis) return String is
         Image : constant String := Thousandths'Image (Value * Thousandths'(0.001));
         Last  : Natural := Image'Last;
      begin
         while Image (Last) = '0' and then Image (Last - 1) /= '.' loop
            Last := Last - 1;
         end loop;
         --  Past the blank where a minus sign would go
         return Image (Image'First + 1 .. Last);
      end Independently;
   begin
      Skeleton.Start_Array;
      Skeleton.Hole (Json_Text.Number_Hole);
      Skeleton.End_Array;
      Pattern := Skeleton.To_Template;
      Assert (Spelled (0) = "0.0", "zero");
      Assert (Spelled (1000) = "1.0", "one");
      Assert (Spelled (875) = "0.875", "three decimals");
      Assert (Spelled (50) = "0.05", "trailing zeros dropped");
      Assert (Spelled (5) = "0.005", "leading zeros kept");
      for Value in Json_Text.Millis loop
         Assert (Spelled (Value) = Independently (Value),
                 Value'Image & " spelled " & Spelled (Value) & ", not " & Independently (Value));
      end loop;
      Json_Text.Free (Pattern);
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

   --  The same document, once plain and once Inside_String: the plain one is
   --  what a plain escaper makes of its parts, and the other is exactly the
   --  plain one quoted as a JSON string's characters.  A text longer than the
   --  escaper's 4096-byte chunks, in a document larger than a builder's first
   --  buffer, runs the chunk loop and the growth under suppressed checks.
   procedure Test_Inside_String (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Plain  : Json_Text.Builder;
      Quoted : Json_Text.Builder (Inside_String => True);
      Tricky : constant String :=
        "say ""hi"" \ tab" & ASCII.HT & " nul" & ASCII.NUL & " lf" & ASCII.LF & " del" & Character'Val (127)
        & " caf" & Character'Val (16#C3#) & Character'Val (16#A9#);
      Long   : constant String := '"' & [1 .. 5_000 => 'x'] & ASCII.LF & [1 .. 12_000 => 'y'] & '\';
      Inner_Plain  : Json_Text.Builder;
      Inner_Quoted : Json_Text.Builder (Inside_String => True);

      procedure Write_Inner (Json : in out Json_Text.Builder) is
      begin
         Json.Start_Object;
         Json.Text_Field ("k", "v""w");
         Json.End_Object;
      end Write_Inner;

      procedure Write (Json : in out Json_Text.Builder; Inner : Json_Text.Builder) is
      begin
         Json.Start_Object;
         Json.Key ("a");
         Json.Start_Array;
         Json.Text (Tricky);
         Json.Raw ("{""r"":""x\""y""}");
         Json.Int (-42);
         Json.Bool (True);
         Json.Raw ("0.875");
         Json.Start_Text;
         Json.Text_Part ("part """);
         Json.Text_Part (Tricky);
         Json.End_Text;
         Json.End_Array;
         Json.Text_Field ("long", Long);
         Json.Key ("inner");
         Json.Raw_Document (Inner);
         Json.Raw_Field ("s", """\n""");
         Json.End_Object;
      end Write;

      Expected : constant String :=
        "{""a"":[""" & Plainly (Tricky) & """,{""r"":""x\""y""},-42,true,0.875,""" & Plainly ("part """ & Tricky)
        & """],""long"":""" & Plainly (Long) & """,""inner"":{""k"":""v\""w""},""s"":""\n""}";

   begin
      Write_Inner (Inner_Plain);
      Write_Inner (Inner_Quoted);
      Write (Plain, Inner_Plain);
      Write (Quoted, Inner_Quoted);
      Assert (Plain.Image = Expected, "the plain document is its parts, escaped the plain way");
      Assert (Quoted.Image = Plainly (Plain.Image), "inside a string, the document is the plain one quoted");
   end Test_Inside_String;

   --  A template filled in is the document written directly, in both forms,
   --  as a whole document and as an item after another, and a quoted one
   --  within a plain builder's text (a document part) is the same document
   --  quoted there; Is_Filling says when every hole has its value; a
   --  template without holes is copied.  The texts are filled as not known
   --  to be plain, so they are escaped as they are written; the numbers are
   --  filled by Fill_Count and Fill_Fraction, against the literals a direct
   --  writer gives.
   procedure Test_Templates (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Tricky : constant String := "say ""hi"" \ " & ASCII.LF & "caf" & Character'Val (16#C3#) & Character'Val (16#A9#);

      --  The document, each hole's value written by Direct or left as a hole
      procedure Write (Json : in out Builder; Direct : Boolean) is
      begin
         Json.Start_Object;
         Json.Key ("a");
         if Direct then
            Json.Text (Tricky);
         else
            Json.Hole (Text_Hole);
         end if;
         Json.Key ("n");
         if Direct then
            Json.Int (42);
         else
            Json.Hole (Number_Hole);
         end if;
         Json.Key ("l");
         Json.Start_Array;
         if Direct then
            Json.Text (Tricky);
         else
            Json.Hole (Text_Hole);
         end if;
         if Direct then
            Json.Raw ("0.875");
         else
            Json.Hole (Number_Hole);
         end if;
         Json.End_Array;
         Json.Text_Field ("t", "x""y");
         Json.End_Object;
      end Write;

      --  Write's holes, one fill each
      procedure Fill (Json : in out Builder; Form : String) is
      begin
         Assert (Json.Is_Filling and then Json.Next_Hole = Text_Hole, Form & "the first hole is a text");
         Json.Fill_Text (Tricky, Plain => False);
         Assert (Json.Holes_Left = 3, Form & "three holes left");
         Json.Fill_Count (42);
         Json.Fill_Text (Tricky, Plain => False);
         Assert (Json.Next_Hole = Number_Hole, Form & "the last hole is a number");
         Json.Fill_Fraction (875);
         Assert (not Json.Is_Filling and then Json.Holes_Left = 0, Form & "no hole is left");
      end Fill;

      procedure Check (Inside_String : Boolean) is
         Skeleton, Direct, Filled : Builder (Inside_String);
         Pattern : Template;
         Form    : constant String := (if Inside_String then "quoted: " else "plain: ");
      begin
         Write (Skeleton, Direct => False);
         Assert (Skeleton.Hole_Count = 4, Form & "four holes written");
         Pattern := Skeleton.To_Template;
         Assert (Is_Inside_String (Pattern) = Inside_String, Form & "the template keeps its form");
         for Round in 1 .. 2 loop
            Direct.Reset;
            Filled.Reset;
            Direct.Start_Array;
            Filled.Start_Array;
            Direct.Int (1);
            Filled.Int (1);
            Write (Direct, Direct => True);
            Filled.Start_Filling (Pattern);
            Fill (Filled, Form);
            Direct.End_Array;
            Filled.End_Array;
            Assert (Filled.Image = Direct.Image, Form & "filled as written, round" & Round'Image & ": " & Filled.Image);
         end loop;
         if Inside_String then
            --  Filled as part of a plain builder's text: the filled quoted
            --  document, as it stands, is that text's characters
            declare
               Whole, By_Part : Builder;
               Whole_Pattern  : Template;
            begin
               Filled.Reset;
               Filled.Start_Filling (Pattern);
               Fill (Filled, Form);
               Whole.Start_Text;
               Assert (Whole.Is_In_Text, "Start_Text opens a text");
               Whole.Text_Part ("before ");
               Whole.Document_Part (Skeleton);
               Whole.End_Text;
               Assert (not Whole.Is_In_Text, "End_Text closes it");
               Whole_Pattern := Whole.To_Template;
               By_Part.Start_Filling (Whole_Pattern);
               Fill (By_Part, "in a text: ");
               Assert (By_Part.Image = """before " & Filled.Image & '"',
                       "a quoted document filled within a text: " & By_Part.Image);
               Free (Whole_Pattern);
            end;
         end if;
         Free (Pattern);
         Assert (Pattern = No_Template, Form & "a freed template is none");
         Skeleton.Reset;
         Skeleton.Text_Field ("k", Tricky);
         Assert (Skeleton.Hole_Count = 0, Form & "Reset forgets the holes");
         Pattern := Skeleton.To_Template;
         Filled.Reset;
         Filled.Start_Filling (Pattern);
         Assert (not Filled.Is_Filling and then Filled.Image = Skeleton.Image, Form & "no holes: copied whole");
         Free (Pattern);
      end Check;

      --  A text the caller found plain is copied as it stands: into both
      --  forms, and into a plain builder's text
      procedure Check_Plain is
         Plain_Text : constant String := "plain words, 'quoted' once";
         Patterns : Hole_Templates := One_Hole ("w");
         Filled, Direct, In_Text : Builder;
         Quoted_Filled : Builder (Inside_String => True);
      begin
         Assert (Json_Bytes.Is_Plain (Plain_Text), "the text is plain");
         Direct.Start_Object;
         Direct.Text_Field ("w", Plain_Text);
         Direct.End_Object;
         Filled.Start_Filling (Patterns.Plain);
         Filled.Fill_Text (Plain_Text, Plain => True);
         Assert (not Filled.Is_Filling and then Filled.Image = Direct.Image,
                 "a plain text filled as it stands: " & Filled.Image);
         Quoted_Filled.Start_Filling (Patterns.Quoted);
         Quoted_Filled.Fill_Text (Plain_Text, Plain => True);
         Assert (Quoted_Filled.Image = Plainly (Direct.Image),
                 "a plain text filled quoted: " & Quoted_Filled.Image);
         In_Text.Start_Filling (Patterns.In_Text);
         In_Text.Fill_Text (Plain_Text, Plain => True);
         Assert (In_Text.Image = '"' & Plainly (Direct.Image) & '"',
                 "a plain text filled within a text: " & In_Text.Image);
         Free (Patterns);
      end Check_Plain;
   begin
      Check (Inside_String => False);
      Check (Inside_String => True);
      Check_Plain;
   end Test_Templates;

   --  A text filled into a text hole is written as Text writes the same
   --  string, in both forms and within a plain text as a quoted document's
   --  text, whatever byte sits at whatever offset: filled as plain where
   --  Json_Bytes.Is_Plain finds it so (sixteen bytes a step, then byte by
   --  byte), and escaped otherwise, so every length from empty past two
   --  steps and every position of the one byte that needs an escape is
   --  tried, and each text is also filled escaped whatever it holds.
   procedure Test_Filled_Texts (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Codes : constant array (Positive range <>) of Natural := [0, 9, 31, 32, 34, 92, 127, 16#C3#];
      Patterns : Hole_Templates := One_Hole;

      --  Text as a string value: Pattern, a template of one text hole, filled
      procedure Filled
        (Json : in out Json_Text.Builder; Pattern : Json_Text.Template; Text : String; Plain : Boolean) is
      begin
         Json.Start_Filling (Pattern);
         Json.Fill_Text (Text, Plain);
      end Filled;

      procedure Check (Text : String; What : String) is
      begin
         for Plain in Boolean loop
            if not Plain or else Json_Bytes.Is_Plain (Text) then
               declare
                  By_Text, By_Hole, In_Text : Json_Text.Builder;
                  Quoted_By_Text, Quoted_By_Hole : Json_Text.Builder (Inside_String => True);
                  How : constant String := What & (if Plain then ", plain" else ", escaped");
               begin
                  By_Text.Text (Text);
                  By_Text.Text ("plain after");
                  Filled (By_Hole, Patterns.Plain, Text, Plain);
                  Filled (By_Hole, Patterns.Plain, "plain after", True);
                  Quoted_By_Text.Text (Text);
                  Filled (Quoted_By_Hole, Patterns.Quoted, Text, Plain);
                  Filled (In_Text, Patterns.In_Text, Text, Plain);
                  Assert (By_Hole.Image = By_Text.Image, How & ": " & By_Hole.Image);
                  Assert (Quoted_By_Hole.Image = Quoted_By_Text.Image, How & ", quoted");
                  Assert (In_Text.Image = '"' & Quoted_By_Text.Image & '"', How & ", quoted within a text");
               end;
            end if;
         end loop;
      end Check;
   begin
      for Code of Codes loop
         for Length in 0 .. 40 loop
            for Offset in 0 .. Integer'Max (Length - 1, 0) loop
               declare
                  Text : String := [1 .. Length => 'a'];
               begin
                  if Length > 0 then
                     Text (Text'First + Offset) := Character'Val (Code);
                  end if;
                  Check (Text, "byte" & Code'Image & " at" & Offset'Image & " of" & Length'Image);
               end;
            end loop;
         end loop;
      end loop;
      Free (Patterns);
   end Test_Filled_Texts;

   --  A run of holes filled in turn is the document written directly: text
   --  holes as they stand (plain) or escaped, in both forms, and the number
   --  after them
   procedure Test_Holes_Filled_In_Turn (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Holes : constant := 6;

      procedure Check (Inside_String : Boolean; Tricky : Boolean) is
         Skeleton : Builder (Inside_String);
         Direct   : Builder (Inside_String);
         Pattern  : Template;
         What     : constant String :=
           (if Inside_String then "quoted" else "plain") & (if Tricky then ", escaped" else ", plain parts");

         function Detail (Hole : Positive) return String is
           (if Tricky and then Hole = 4 then "a ""quoted"" \ tab" & ASCII.HT
            else [1 .. Hole * 3 => Character'Val (Character'Pos ('a') + Hole)]);

         --  The document, its values written by Values or left as holes
         procedure Write (Json : in out Builder; Values : Boolean) is
         begin
            Json.Start_Object;
            Json.Key ("steps");
            Json.Start_Array;
            for Hole in 1 .. Holes loop
               Json.Start_Object;
               Json.Int_Field ("index", Long_Long_Integer (Hole));
               Json.Key ("detail");
               if Values then
                  Json.Text (Detail (Hole));
               else
                  Json.Hole (Text_Hole);
               end if;
               Json.End_Object;
            end loop;
            Json.End_Array;
            Json.Key ("n");
            if Values then
               Json.Int (7);
            else
               Json.Hole (Number_Hole);
            end if;
            Json.End_Object;
         end Write;
      begin
         Write (Skeleton, Values => False);
         Pattern := Skeleton.To_Template;
         Write (Direct, Values => True);
         for Round in 1 .. 2 loop
            declare
               In_Turn : Builder (Inside_String);
            begin
               In_Turn.Start_Filling (Pattern);
               for Hole in 1 .. Holes loop
                  Assert (In_Turn.Holes_Left = Holes + 2 - Hole, What & ": holes left before" & Hole'Image);
                  In_Turn.Fill_Text (Detail (Hole), Plain => Json_Bytes.Is_Plain (Detail (Hole)));
               end loop;
               In_Turn.Fill_Count (7);
               Assert (not In_Turn.Is_Filling, What & ": every hole filled");
               Assert (In_Turn.Image = Direct.Image, What & ", round" & Round'Image & ": " & In_Turn.Image);
            end;
         end loop;
         --  The same holes filled by one Fill_Texts, from one text holding
         --  every detail after a lead that no span covers
         declare
            Lead   : constant String := "not a detail ";
            Bytes  : Unbounded_String := To_Unbounded_String (Lead);
            Spans  : Text_Spans (1 .. Holes);
            Plain  : Boolean := True;
            In_Bulk : Builder (Inside_String);
         begin
            for Hole in 1 .. Holes loop
               Spans (Hole) := (First => Length (Bytes) + 1, Last => Length (Bytes) + Detail (Hole)'Length);
               Append (Bytes, Detail (Hole));
               Plain := Plain and then Json_Bytes.Is_Plain (Detail (Hole));
            end loop;
            In_Bulk.Start_Filling (Pattern);
            Assert (In_Bulk.Are_Text_Holes (Holes) and then In_Bulk.Are_Text_Holes (0),
                    What & ": the steps' holes are text holes");
            Assert (not In_Bulk.Are_Text_Holes (Holes + 1), What & ": the number hole is not a text hole");
            In_Bulk.Fill_Texts (To_String (Bytes), Spans, Plain);
            Assert (In_Bulk.Holes_Left = 1 and then not In_Bulk.Are_Text_Holes (1),
                    What & ": the number hole is left");
            In_Bulk.Fill_Count (7);
            Assert (In_Bulk.Image = Direct.Image, What & ", in one call: " & In_Bulk.Image);
         end;
         Free (Pattern);
      end Check;
   begin
      for Inside_String in Boolean loop
         for Tricky in Boolean loop
            Check (Inside_String, Tricky);
         end loop;
      end loop;
   end Test_Holes_Filled_In_Turn;

   --  A whole reply as one template: a raw hole, a hole within a text, a
   --  quoted document with holes as part of that text, a plain document
   --  with holes.  Each hole is filled escaped as it was written: the
   --  quoted document's texts twice, the others once.
   procedure Test_Document_Parts (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Tricky : constant String := "say ""hi"" \ " & ASCII.LF & "caf" & Character'Val (16#C3#) & Character'Val (16#A9#);
      Quoted_Tricky : constant String := Quoted (Tricky);
      Escaped : constant String := Quoted_Tricky (Quoted_Tricky'First + 1 .. Quoted_Tricky'Last - 1);
      Inner   : Builder (Inside_String => True);
      Whole   : Builder;
      Pattern : Template;
      Inner_Direct : Builder (Inside_String => True);
      Plain_Direct : Builder;

      function Expected return String is
        ("{""id"":""x"",""t"":""" & Escaped & "\n\n" & Inner_Direct.Image & """,""p"":" & Plain_Direct.Image & "}");
   begin
      Inner.Start_Object;
      Inner.Key ("a");
      Inner.Hole (Text_Hole);
      Inner.Key ("n");
      Inner.Hole (Number_Hole);
      Inner.End_Object;
      Whole.Start_Object;
      Whole.Key ("id");
      Whole.Hole (Raw_Hole);
      Whole.Key ("t");
      Whole.Start_Text;
      Whole.Hole (Text_Hole);
      Whole.Text_Part ([ASCII.LF, ASCII.LF]);
      Whole.Document_Part (Inner);
      Whole.End_Text;
      Whole.Key ("p");
      Whole.Start_Object;
      Whole.Key ("a");
      Whole.Hole (Text_Hole);
      Whole.Key ("n");
      Whole.Hole (Number_Hole);
      Whole.End_Object;
      Whole.End_Object;
      Assert (Whole.Hole_Count = 6, "the document part brings its holes:" & Whole.Hole_Count'Image);
      Pattern := Whole.To_Template;
      Inner_Direct.Start_Object;
      Inner_Direct.Text_Field ("a", Tricky);
      Inner_Direct.Int_Field ("n", 42);
      Inner_Direct.End_Object;
      Plain_Direct.Start_Object;
      Plain_Direct.Text_Field ("a", Tricky);
      Plain_Direct.Int_Field ("n", 42);
      Plain_Direct.End_Object;
      for Round in 1 .. 2 loop
         declare
            Filled : Builder;
         begin
            Filled.Start_Filling (Pattern);
            Assert (Filled.Next_Hole = Raw_Hole, "the id's hole is raw");
            Filled.Fill_Raw ("""x""");
            --  The text within the text and the quoted document's text are
            --  consecutive text holes, escaped differently
            Filled.Fill_Text (Tricky, Plain => False);
            Filled.Fill_Text (Tricky, Plain => False);
            Filled.Fill_Count (42);
            Filled.Fill_Text (Tricky, Plain => False);
            Filled.Fill_Count (42);
            Assert (not Filled.Is_Filling, "every hole filled");
            Assert (Filled.Image = Expected, "round" & Round'Image & ": " & Filled.Image & " /= " & Expected);
         end;
      end loop;
      Free (Pattern);
   end Test_Document_Parts;

   --  A raw value given in both forms fills a raw hole of a plain builder
   --  and one of a quoted document part as the one form quoted here does
   procedure Test_Raw_In_Both_Forms (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Value   : constant String := "{""k"":[1,""v""]}";
      Literal : constant String := Quoted (Value);
      Inside  : constant String := Literal (Literal'First + 1 .. Literal'Last - 1);
      Inner   : Builder (Inside_String => True);
      Whole   : Builder;
      Pattern : Template;
      One_Form, Two_Forms : Builder;
   begin
      Inner.Start_Object;
      Inner.Key ("r");
      Inner.Hole (Raw_Hole);
      Inner.End_Object;
      Whole.Start_Object;
      Whole.Key ("t");
      Whole.Start_Text;
      Whole.Document_Part (Inner);
      Whole.End_Text;
      Whole.Key ("r");
      Whole.Hole (Raw_Hole);
      Whole.End_Object;
      Pattern := Whole.To_Template;
      One_Form.Start_Filling (Pattern);
      One_Form.Fill_Raw (Value);
      One_Form.Fill_Raw (Value);
      Two_Forms.Start_Filling (Pattern);
      Two_Forms.Fill_Raw (Value, Inside);
      Assert (Two_Forms.Is_Filling, "one hole left");
      Two_Forms.Fill_Raw (Value, Inside);
      Assert (not Two_Forms.Is_Filling, "every hole filled");
      Assert (Two_Forms.Image = One_Form.Image, Two_Forms.Image & " /= " & One_Form.Image);
      Assert (Two_Forms.Image = "{""t"":""{\""r\"":" & Inside & "}"",""r"":" & Value & "}",
              "the quoted copy takes the quoted form: " & Two_Forms.Image);
      Free (Pattern);
   end Test_Raw_In_Both_Forms;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Quoting'Access, "strings are quoted as JSON requires");
      Register_Routine (T, Test_Quoting_At_Every_Offset'Access, "every byte is quoted alike at every offset");
      Register_Routine (T, Test_One_Escape_Set'Access, "the escaper and the many-byte tests spell one set");
      Register_Routine (T, Test_Fractions'Access, "fractions print with at most three decimals");
      Register_Routine (T, Test_Builder'Access, "the builder writes compact JSON");
      Register_Routine (T, Test_Inside_String'Access, "a builder inside a string writes its document quoted");
      Register_Routine (T, Test_Templates'Access, "a template filled in is the document written directly");
      Register_Routine (T, Test_Filled_Texts'Access, "a filled text is written as Text writes it, plain or not");
      Register_Routine (T, Test_Holes_Filled_In_Turn'Access, "holes filled in turn are the document written directly");
      Register_Routine (T, Test_Document_Parts'Access, "a document part's holes are filled as they were written");
      Register_Routine (T, Test_Raw_In_Both_Forms'Access, "a raw value given in both forms fills as one form does");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Json_Text");
   end Name;

end Json_Text_Tests;
