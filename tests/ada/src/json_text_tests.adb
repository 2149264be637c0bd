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

   --  A fraction as Add_Fraction spells it into a store, against literals
   --  and, for every value, against a spelling the writer does not share:
   --  a decimal fixed point image, its trailing zeros dropped down to one
   procedure Test_Fractions (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      type Thousandths is delta 0.001 digits 4;
      Store : Json_Text.Text_Store (16);

      function Spelled (Value : Json_Text.Millis) return String is
         Part : Json_Text.Stored_Text;
      begin
         Json_Text.Clear (Store);
         Json_Text.Start_Part (Store);
         Json_Text.Add_Fraction (Store, Value);
         Json_Text.End_Part (Store, Part);
         return Json_Text.Text_Of (Store, Part);
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
      Assert (Spelled (0) = "0.0", "zero");
      Assert (Spelled (1000) = "1.0", "one");
      Assert (Spelled (875) = "0.875", "three decimals");
      Assert (Spelled (50) = "0.05", "trailing zeros dropped");
      Assert (Spelled (5) = "0.005", "leading zeros kept");
      for Value in Json_Text.Millis loop
         Assert (Spelled (Value) = Independently (Value),
                 Value'Image & " spelled " & Spelled (Value) & ", not " & Independently (Value));
      end loop;
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
   --  template without holes is copied.  The texts come from a store no
   --  seal has tested, so they are escaped as they are written; the numbers
   --  are stored as Add_Fraction spells them or as they stand, against the
   --  literals a direct writer gives.
   procedure Test_Templates (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Tricky : constant String := "say ""hi"" \ " & ASCII.LF & "caf" & Character'Val (16#C3#) & Character'Val (16#A9#);
      Store  : Text_Store (256);
      Part, Minus, Fraction : Stored_Text;

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
            Json.Int (-42);
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
         Json.Fill_Stored (Store, [Part]);
         Assert (Json.Holes_Left = 3, Form & "three holes left");
         Json.Fill_Stored (Store, [Minus]);
         Json.Fill_Stored (Store, [Part]);
         Assert (Json.Next_Hole = Number_Hole, Form & "the last hole is a number");
         Json.Fill_Stored (Store, [Fraction]);
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

      --  A text a seal found plain is copied as it stands: into both forms,
      --  and into a plain builder's text
      procedure Check_Sealed is
         Plain_Store : Text_Store (64);
         Before, Plain_Part : Stored_Text;
         Patterns : Hole_Templates := One_Hole ("w");
         Filled, Direct, In_Text : Builder;
         Quoted_Filled : Builder (Inside_String => True);
      begin
         Keep (Plain_Store, "kept first", Before);
         Keep (Plain_Store, "plain words, 'quoted' once", Plain_Part);
         Seal (Plain_Store);
         Direct.Start_Object;
         Direct.Text_Field ("w", "plain words, 'quoted' once");
         Direct.End_Object;
         Filled.Start_Filling (Patterns.Plain);
         Filled.Fill_Stored (Plain_Store, [Plain_Part]);
         Assert (not Filled.Is_Filling and then Filled.Image = Direct.Image,
                 "a sealed plain text filled as it stands: " & Filled.Image);
         Quoted_Filled.Start_Filling (Patterns.Quoted);
         Quoted_Filled.Fill_Stored (Plain_Store, [Plain_Part]);
         Assert (Quoted_Filled.Image = Plainly (Direct.Image),
                 "a sealed plain text filled quoted: " & Quoted_Filled.Image);
         In_Text.Start_Filling (Patterns.In_Text);
         In_Text.Fill_Stored (Plain_Store, [Plain_Part]);
         Assert (In_Text.Image = '"' & Plainly (Direct.Image) & '"',
                 "a sealed plain text filled within a text: " & In_Text.Image);
         Free (Patterns);
      end Check_Sealed;
   begin
      Keep (Store, Tricky, Part);
      Keep (Store, "-42", Minus);
      Start_Part (Store);
      Add_Fraction (Store, 875);
      End_Part (Store, Fraction);
      Check (Inside_String => False);
      Check (Inside_String => True);
      Check_Sealed;
   end Test_Templates;

   --  A stored text filled into a text hole is written as Text writes the
   --  same string, in both forms and within a plain text as a quoted
   --  document's text, whatever byte sits at whatever offset, before and
   --  after the store is sealed: the seal tests sixteen bytes a step, then
   --  byte by byte, so every length from empty past two steps and every
   --  position of the one byte that needs an escape is tried, among plain
   --  texts kept before and after it, and in a second sealing after a
   --  first one.
   procedure Test_Stored_Texts (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Store : Json_Text.Text_Store (4096);
      Codes : constant array (Positive range <>) of Natural := [0, 9, 31, 32, 34, 92, 127, 16#C3#];
      Patterns : Hole_Templates := One_Hole;

      --  Part as a string value: Pattern, a template of one text hole, filled
      procedure Stored (Json : in out Json_Text.Builder; Pattern : Json_Text.Template; Part : Json_Text.Stored_Text) is
      begin
         Json.Start_Filling (Pattern);
         Json.Fill_Stored (Store, [Part]);
      end Stored;

      procedure Check (Text : String; What : String) is
         Part, After, Later : Json_Text.Stored_Text;
      begin
         Json_Text.Keep (Store, Text, Part);
         Json_Text.Keep (Store, "plain after", After);
         Assert (Json_Text.Text_Of (Store, Part) = Text, What & ": a kept text reads back as it was");
         Assert (Json_Text.Is_Empty (Part) = (Text'Length = 0), What & ": only an empty text is empty");
         for Seals in 0 .. 2 loop
            --  The second seal tests only a plain text kept since the first
            if Seals = 2 then
               Json_Text.Keep (Store, "plain later", Later);
            end if;
            if Seals > 0 then
               Json_Text.Seal (Store);
               Assert (Json_Text.Is_Sealed (Store), What & ": sealed");
            end if;
            declare
               By_Text, By_Part, In_Text : Json_Text.Builder;
               Quoted_By_Text, Quoted_By_Part : Json_Text.Builder (Inside_String => True);
            begin
               By_Text.Text (Text);
               By_Text.Text ("plain after");
               Stored (By_Part, Patterns.Plain, Part);
               Stored (By_Part, Patterns.Plain, After);
               Quoted_By_Text.Text (Text);
               Stored (Quoted_By_Part, Patterns.Quoted, Part);
               Stored (In_Text, Patterns.In_Text, Part);
               Assert (By_Part.Image = By_Text.Image,
                       What & "," & Seals'Image & " seals: " & By_Part.Image);
               Assert (Quoted_By_Part.Image = Quoted_By_Text.Image,
                       What & "," & Seals'Image & " seals, quoted");
               Assert (In_Text.Image = '"' & Quoted_By_Text.Image & '"',
                       What & "," & Seals'Image & " seals, quoted within a text");
            end;
         end loop;
      end Check;
   begin
      for Code of Codes loop
         for Length in 0 .. 40 loop
            for Offset in 0 .. Integer'Max (Length - 1, 0) loop
               declare
                  Text  : String := [1 .. Length => 'a'];
                  Plain : Json_Text.Stored_Text;
                  What  : constant String := "byte" & Code'Image & " at" & Offset'Image & " of" & Length'Image;
               begin
                  if Length > 0 then
                     Text (Text'First + Offset) := Character'Val (Code);
                  end if;
                  Json_Text.Clear (Store);
                  Json_Text.Keep (Store, "plain before", Plain);
                  Check (Text, What);
                  Json_Text.Clear (Store);
                  Json_Text.Keep (Store, "plain, sealed first", Plain);
                  Json_Text.Seal (Store);
                  Check (Text, What & " after a first seal");
               end;
            end loop;
         end loop;
      end loop;
      Json_Text.Clear (Store);
      Assert (Json_Text.Room (Store) = 4096, "a cleared store has all its room again");
      Free (Patterns);
   end Test_Stored_Texts;

   --  A text written into a store in pieces reads back as the pieces
   --  joined, and as the same text kept whole; a store out of room cuts the
   --  part at a character boundary and leaves the rest of it out.
   procedure Test_Parts_In_Pieces (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);
      Euro    : constant String := Character'Val (16#E2#) & Character'Val (16#82#) & Character'Val (16#AC#);

      function Written (Store : in out Json_Text.Text_Store; Pieces : String) return String is
         Part : Json_Text.Stored_Text;
      begin
         Json_Text.Start_Part (Store);
         Json_Text.Add (Store, Pieces (Pieces'First .. Pieces'First + Pieces'Length / 2 - 1));
         Json_Text.Add (Store, Pieces (Pieces'First + Pieces'Length / 2 .. Pieces'Last));
         Json_Text.End_Part (Store, Part);
         Assert (not Json_Text.Is_Writing (Store), "a part ended is no longer written");
         return Json_Text.Text_Of (Store, Part);
      end Written;
   begin
      declare
         Store : Json_Text.Text_Store (256);
         Whole, Joined, Again : Json_Text.Stored_Text;
      begin
         Json_Text.Keep (Store, "draw: the tower", Whole);
         Json_Text.Start_Part (Store);
         Assert (Json_Text.Is_Writing (Store), "a part started is being written");
         Json_Text.Add (Store, "turn ");
         Json_Text.Add_Image (Store, 0);
         Json_Text.Add (Store, " ");
         Json_Text.Add_Image (Store, Natural'Last);
         Json_Text.Add (Store, ", ");
         Json_Text.Add_Fraction (Store, 875);
         Json_Text.Add (Store, " / ");
         Json_Text.Add_Kept (Store, Whole);
         Json_Text.Add (Store, "");
         Json_Text.End_Part (Store, Joined);
         Assert (Json_Text.Text_Of (Store, Joined)
                 = "turn 0" & Natural'Last'Image & ", 0.875 / draw: the tower",
                 "pieces join: " & Json_Text.Text_Of (Store, Joined));
         Json_Text.Keep (Store, Json_Text.Text_Of (Store, Joined), Again);
         Assert (Json_Text.Length (Again) = Json_Text.Length (Joined)
                 and then Json_Text.Text_Of (Store, Again) = Json_Text.Text_Of (Store, Joined),
                 "a part written in pieces is the part kept whole");
      end;
      declare
         Store : Json_Text.Text_Store (8);
      begin
         Assert (Written (Store, "abcdef" & E_Acute & Euro) = "abcdef" & E_Acute,
                 "a piece too long is cut after its last whole character");
         Json_Text.Clear (Store);
         Assert (Written (Store, "abcdefg" & E_Acute) = "abcdefg",
                 "a character that does not fit is left out whole");
         Json_Text.Clear (Store);
         declare
            Part : Json_Text.Stored_Text;
         begin
            Json_Text.Start_Part (Store);
            Json_Text.Add (Store, "abcdef" & Euro);
            Json_Text.Add (Store, "x");
            Json_Text.End_Part (Store, Part);
            Assert (Json_Text.Text_Of (Store, Part) = "abcdef",
                    "after a cut, a piece that would fit is left out too: " & Json_Text.Text_Of (Store, Part));
            Json_Text.Start_Part (Store);
            Json_Text.Add (Store, "yz");
            Json_Text.End_Part (Store, Part);
            Assert (Json_Text.Text_Of (Store, Part) = "yz", "the next part takes the room left");
            Json_Text.Start_Part (Store);
            Json_Text.Add (Store, "!");
            Json_Text.End_Part (Store, Part);
            Assert (Json_Text.Is_Empty (Part) and then Json_Text.Room (Store) = 0, "a full store keeps empty parts");
            Assert (not Json_Text.Is_Whole (Store), "a store that cut a part says so");
            Json_Text.Clear (Store);
            Assert (Json_Text.Is_Whole (Store), "until it is cleared");
         end;
      end;
   end Test_Parts_In_Pieces;

   --  Fill_Stored fills a run of consecutive holes as the document is
   --  written directly: text parts copied as they stand (sealed plain) or
   --  escaped, in both forms, the whole run at once, a part of it then the
   --  rest one by one, or a part of it then the rest in a second call, the
   --  number after them from a part spelled by Add_Image
   procedure Test_Texts_Filled_At_Once (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Json_Text;
      Holes : constant := 6;

      procedure Check (Inside_String : Boolean; Tricky : Boolean) is
         Skeleton : Builder (Inside_String);
         Direct   : Builder (Inside_String);
         Pattern  : Template;
         Store    : Text_Store (512);
         Parts    : Stored_Texts (1 .. Holes);
         Seven    : Stored_Text;
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
         for Hole in 1 .. Holes loop
            Keep (Store, Detail (Hole), Parts (Hole));
         end loop;
         Start_Part (Store);
         Add_Image (Store, 7);
         End_Part (Store, Seven);
         Seal (Store);
         for At_Once in 0 .. Holes loop
            declare
               Together : Builder (Inside_String);
            begin
               Together.Start_Filling (Pattern);
               Together.Fill_Stored (Store, Parts (1 .. At_Once));
               Assert (Together.Holes_Left = Holes + 1 - At_Once, What & ": holes left after" & At_Once'Image);
               for Part of Parts (At_Once + 1 .. Holes) loop
                  Together.Fill_Stored (Store, [Part]);
               end loop;
               Together.Fill_Stored (Store, [Seven]);
               Assert (not Together.Is_Filling, What & ": every hole filled");
               Assert (Together.Image = Direct.Image,
                       What & "," & At_Once'Image & " at once, then one by one: " & Together.Image);
               --  The rest in a second call, its parts not numbered from 1
               Together.Reset;
               Together.Start_Filling (Pattern);
               Together.Fill_Stored (Store, Parts (1 .. At_Once));
               Together.Fill_Stored (Store, Parts (At_Once + 1 .. Holes) & Seven);
               Assert (not Together.Is_Filling and then Together.Image = Direct.Image,
                       What & "," & At_Once'Image & " at once, then the rest: " & Together.Image);
            end;
         end loop;
         Free (Pattern);
      end Check;
   begin
      for Inside_String in Boolean loop
         for Tricky in Boolean loop
            Check (Inside_String, Tricky);
         end loop;
      end loop;
   end Test_Texts_Filled_At_Once;

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
      Store : Text_Store (256);
      Part, Minus : Stored_Text;

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
      Inner_Direct.Int_Field ("n", -42);
      Inner_Direct.End_Object;
      Plain_Direct.Start_Object;
      Plain_Direct.Text_Field ("a", Tricky);
      Plain_Direct.Int_Field ("n", -42);
      Plain_Direct.End_Object;
      Keep (Store, Tricky, Part);
      Keep (Store, "-42", Minus);
      Seal (Store);
      for Round in 1 .. 2 loop
         declare
            Filled : Builder;
         begin
            Filled.Start_Filling (Pattern);
            Assert (Filled.Next_Hole = Raw_Hole, "the id's hole is raw");
            Filled.Fill_Raw ("""x""");
            if Round = 1 then
               for Value of Stored_Texts'[Part, Part, Minus, Part, Minus] loop
                  Filled.Fill_Stored (Store, [Value]);
               end loop;
            else
               --  The text within the text and the quoted document's text
               --  are consecutive text holes, escaped differently; the
               --  quoted document's number, then the plain one's holes
               Filled.Fill_Stored (Store, [Part, Part, Minus, Part, Minus]);
            end if;
            Assert (not Filled.Is_Filling, "every hole filled");
            Assert (Filled.Image = Expected, "round" & Round'Image & ": " & Filled.Image & " /= " & Expected);
         end;
      end loop;
      Free (Pattern);
   end Test_Document_Parts;

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
      Register_Routine (T, Test_Stored_Texts'Access, "a stored text is written as Text writes it, sealed or not");
      Register_Routine (T, Test_Texts_Filled_At_Once'Access, "holes filled at once are the document written directly");
      Register_Routine (T, Test_Document_Parts'Access, "a document part's holes are filled as they were written");
      Register_Routine (T, Test_Parts_In_Pieces'Access, "a text written in pieces is the pieces joined, cut whole");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Json_Text");
   end Name;

end Json_Text_Tests;
