with AUnit.Assertions;
with GNATCOLL.JSON;
with Input_Guard;
with Json_Reader;

package body Json_Reader_Tests is

   use AUnit.Assertions;
   use Json_Reader;
   use type Input_Guard.Finding;

   Roomy : constant Input_Guard.Limits := (Max_Depth => 64, Max_Elements => 10_000);
   --  Limits no valid line here reaches

   --  The reader must accept exactly what RFC 8259 accepts, and agree with
   --  GNATCOLL.JSON (the reference the design names) on every value.

   Valid_Lines : constant array (Positive range <>) of access constant String :=
     [new String'("{""jsonrpc"":""2.0"",""id"":1,""method"":""ping""}"),
      new String'("  [1, -0, 0.5, -12.5e+3, 1E2, true, false, null, ""x""]  "),
      new String'("{""a"":{""b"":[[],{}]},""c"":""\u00e9\ud83d\ude00\n\t\""\\\/""}"),
      new String'("""just a string"""),
      new String'("12345678901234567890"),
      new String'("{""id"":1,""id"":2}"),
      new String'("{""\u0069d"":7}"),
      new String'("[" & [1 .. 60 => '['] & [1 .. 60 => ']'] & "]")];

   Invalid_Lines : constant array (Positive range <>) of access constant String :=
     [new String'("{not json"), new String'("[1,]"), new String'("{""a"":1,}"),
      new String'("[01]"), new String'("[1.]"), new String'("[.5]"), new String'("[1e]"),
      new String'("[+1]"), new String'("[tru]"), new String'("[nul]"), new String'("""\x"""),
      new String'("""\u12g4"""), new String'("{""a"" 1}"), new String'("{1:2}"),
      new String'("[1 2]"), new String'("{} {}"), new String'(""), new String'("   "),
      new String'("[""unterminated]"), new String'("{""a"":}"), new String'("]"),
      new String'("[1]]"), new String'("{""a"":1"), new String'("[-]"), new String'("-01")];

   procedure Test_Valid_Lines_Parse (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Reader : Document;
   begin
      for Line of Valid_Lines loop
         Reader.Parse (Line.all, Roomy);
         Assert (Reader.Is_Valid, "should parse: " & Line.all
                 & (if Reader.Is_Valid then "" else " (" & Reader.Error_Message & ")"));
         Assert (GNATCOLL.JSON.Read (Line.all).Success, "GNATCOLL.JSON parses it too: " & Line.all);
      end loop;
   end Test_Valid_Lines_Parse;

   procedure Test_Invalid_Lines_Fail (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Reader : Document;
   begin
      for Line of Invalid_Lines loop
         Reader.Parse (Line.all, Roomy);
         Assert (not Reader.Is_Valid, "should be refused: '" & Line.all & "'");
         Assert (Reader.Error_Column <= Line'Length + 1, "the column lies within the line: " & Line.all);
         Assert (not GNATCOLL.JSON.Read (Line.all).Success, "GNATCOLL.JSON refuses it too: " & Line.all);
      end loop;
   end Test_Invalid_Lines_Fail;

   procedure Test_Values_Read_Back (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Reader : Document;
      Line   : constant String :=
        " {""id"" : 12345678901234567890, ""s"":""caf\u00e9 \ud83d\ude00 \""q\""\n"", ""k"":""\u0069d"", ""id2"":-1.5e3,"
        & " ""arr"":[1,{""x"":null}], ""dup"":1, ""dup"":""last""} ";
      Root   : Node_Id;
   begin
      Reader.Parse (Line, Roomy);
      Assert (Reader.Is_Valid, "parses");
      Root := Reader.Root;
      Assert (Kind (Reader, Root) = Object_Value, "an object");
      Assert (Raw (Reader, Line, Member (Reader, Line, Root, "id")) = "12345678901234567890",
              "a large integer reads back exactly as sent");
      Assert (Raw (Reader, Line, Member (Reader, Line, Root, "id2")) = "-1.5e3", "so does a float");
      Assert (Text (Reader, Line, Member (Reader, Line, Root, "s"))
              = "caf" & Character'Val (16#C3#) & Character'Val (16#A9#) & " "
                & Character'Val (16#F0#) & Character'Val (16#9F#) & Character'Val (16#98#) & Character'Val (16#80#)
                & " ""q""" & ASCII.LF,
              "escapes decode to UTF-8, surrogate pairs to one character");
      Assert (Text (Reader, Line, Member (Reader, Line, Root, "k")) = "id", "an escaped text compares decoded");
      Assert (Text (Reader, Line, Member (Reader, Line, Root, "dup")) = "last", "the last duplicate wins");
      Assert (Member (Reader, Line, Root, "absent") = No_Node, "an absent member is No_Node");
      for Name of Name_List'[new String'("s"), new String'("k"), new String'("dup")] loop
         declare
            Node  : constant Node_Id := Member (Reader, Line, Root, Name.all);
            Calls : Natural := 0;

            procedure Compare (Queried : String) is
            begin
               Calls := Calls + 1;
               Assert (Queried = Text (Reader, Line, Node), "Query_Text hands Text (" & Name.all & ")");
            end Compare;
         begin
            Query_Text (Reader, Line, Node, Compare'Access);
            Assert (Calls = 1, "Query_Text calls its process once");
            Assert (Text_Is (Reader, Line, Node, Text (Reader, Line, Node)), "Text_Is its own Text (" & Name.all & ")");
            Assert (not Text_Is (Reader, Line, Node, Raw (Reader, Line, Node)),
                    "Text_Is compares the decoded text, not the literal (" & Name.all & ")");
         end;
      end loop;
      declare
         Names : constant Name_List :=
           [new String'("s"), new String'("id"), new String'("dup"), new String'("id2"), new String'("id")];
      begin
         Assert (Key_Index (Reader, Line, Member (Reader, Line, Root, "id"), Names) = 2,
                 "a name listed twice is found in its first place");
         Assert (Key_Index (Reader, Line, Member (Reader, Line, Root, "id2"), Names) = 4,
                 "a name is not taken for a shorter one it starts with");
         Assert (Key_Index (Reader, Line, Member (Reader, Line, Root, "k"), Names) = 0,
                 "a name not listed is at place 0");
         Assert (Key_Index (Reader, Line, Member (Reader, Line, Root, "s"), Names (2 .. 5)) = 0,
                 "only the names given are searched");
      end;
      declare
         Wanted  : constant Name_List := [new String'("dup"), new String'("absent"), new String'("id")];
         Every   : constant Name_List :=
           [new String'("id"), new String'("s"), new String'("k"), new String'("id2"), new String'("arr"),
            new String'("dup")];
         Found   : Member_Values (Wanted'Range);
         All_Found : Member_Values (Every'Range);
         Unknown : Node_Id;
      begin
         Find_Members (Reader, Line, Root, To_Name_Set (Wanted), Found, Unknown);
         Assert (Found (1) = Member (Reader, Line, Root, "dup") and then Text (Reader, Line, Found (1)) = "last",
                 "a member found in the walk is the one Member finds: the last duplicate");
         Assert (Found (2) = No_Node, "an absent member is found as No_Node");
         Assert (Raw (Reader, Line, Found (3)) = "12345678901234567890", "the id is found");
         Assert (Unknown = Member (Reader, Line, Root, "s"), "the first member not asked for is the unknown one");
         Find_Members (Reader, Line, Root, To_Name_Set (Every), All_Found, Unknown);
         Assert (Unknown = No_Node, "no member is unknown when every name is asked for");
         for K in Every'Range loop
            Assert (All_Found (K) = Member (Reader, Line, Root, Every (K).all), "member " & Every (K).all);
         end loop;
      end;
      declare
         Escaped : constant String := "{""\u0069d"":1,""i\u0064"":2,""ix"":3}";
         Names   : constant Name_List := [new String'("ix"), new String'("id")];
         Other   : Document;
         Item    : Node_Id;
      begin
         Other.Parse (Escaped, Roomy);
         Item := First_Child (Other, Other.Root);
         Assert (Key_Index (Other, Escaped, Item, Names) = 2, "an escaped name compares decoded");
         Item := Next_Sibling (Other, Item);
         Assert (Key_Index (Other, Escaped, Item, Names) = 2, "escaped at its end too");
         Item := Next_Sibling (Other, Item);
         Assert (Key_Index (Other, Escaped, Item, Names) = 1,
                 "a name of the same length and first byte is told apart: " & Key (Other, Escaped, Item));
         Assert (Raw (Other, Escaped, Member (Other, Escaped, Other.Root, "id")) = "2",
                 "a member's escaped name compares decoded, the last of two such winning");
         Assert (Raw (Other, Escaped, Member (Other, Escaped, Other.Root, "ix")) = "3",
                 "a member named like an escaped one, same length and first byte, is told apart");
         Assert (Member (Other, Escaped, Other.Root, "i") = No_Node, "a name is not a shorter one's member");
      end;
      declare
         Items : constant Node_Id := Member (Reader, Line, Root, "arr");
         First : constant Node_Id := First_Child (Reader, Items);
         Second : constant Node_Id := Next_Sibling (Reader, First);
      begin
         Assert (Raw (Reader, Line, First) = "1", "the first element");
         Assert (Kind (Reader, Member (Reader, Line, Second, "x")) = Null_Value, "a nested member");
         Assert (Next_Sibling (Reader, Second) = No_Node, "two elements only");
      end;
   end Test_Values_Read_Back;

   --  The reader and GNATCOLL.JSON agree on strings read from many
   --  documents: every string member of every valid line decodes the same.
   procedure Test_Agrees_With_Gnatcoll (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Reader : Document;
      Line   : constant String :=
        "{""a"":""plain"",""b"":""\u00e9\u4e2d\ud83d\ude00"",""c"":""\""\\\/\b\f\n\r\t"",""d"":"""","
        & """e"":""caf" & Character'Val (16#C3#) & Character'Val (16#A9#) & """}";
      Reference : constant GNATCOLL.JSON.Read_Result := GNATCOLL.JSON.Read (Line);
   begin
      Reader.Parse (Line, Roomy);
      Assert (Reader.Is_Valid and then Reference.Success, "both parse");
      for Name in Character range 'a' .. 'e' loop
         Assert (Text (Reader, Line, Member (Reader, Line, Reader.Root, [Name]))
                 = String'(GNATCOLL.JSON.Get (Reference.Value, [Name])),
                 "member " & Name & " decodes as GNATCOLL.JSON decodes it");
      end loop;
   end Test_Agrees_With_Gnatcoll;

   --  A string's end, an escape or a control byte at every offset of a
   --  run longer than the eight bytes the reader passes at once.
   procedure Test_Strings_At_Every_Offset (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for Offset in 0 .. 20 loop
         declare
            Run     : constant String := [1 .. Offset => 'a'];
            Escaped : constant String := "[""" & Run & "\""" & Run & """]";
            Ended   : constant String := "[""" & Run & """,""" & Run & "x""]";
            Control : constant String := "[""" & Run & ASCII.HT & Run & """]";
            Reader  : Document;
         begin
            Reader.Parse (Escaped, Roomy);
            Assert (Reader.Is_Valid
                    and then Text (Reader, Escaped, First_Child (Reader, Reader.Root)) = Run & '"' & Run,
                    "an escaped quote after" & Offset'Image & " plain bytes");
            Reader.Parse (Ended, Roomy);
            Assert (Reader.Is_Valid
                    and then Text (Reader, Ended, First_Child (Reader, Reader.Root)) = Run,
                    "a string ending after" & Offset'Image & " plain bytes");
            Reader.Parse (Control, Roomy);
            Assert (not Reader.Is_Valid, "a raw tab after" & Offset'Image & " plain bytes is refused");
         end;
      end loop;
   end Test_Strings_At_Every_Offset;

   --  Thousands of near-valid documents, made by mutating valid ones with
   --  a fixed generator (delete, insert or replace a byte from a JSON-ish
   --  alphabet): the reader and GNATCOLL.JSON accept and refuse the same
   --  ones.  Lines the input guard refuses never reach the reader in the
   --  body, so they are not compared.
   procedure Test_Mutants_Agree_With_Gnatcoll (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Alphabet : constant String := "{}[]:,""\ -+.0123456789eEtrufalsn/bx" & ASCII.HT;
      State    : Long_Long_Integer := 20261129;
      Reader   : Document;
      Compared : Natural := 0;

      function Next (Bound : Positive) return Natural is
      begin
         State := (State * 69069 + 1442695041) mod 2**40;
         return Natural ((State / 256) mod Long_Long_Integer (Bound));
      end Next;
   begin
      for Round in 1 .. 4_000 loop
         declare
            Seed  : constant String := Valid_Lines (Round mod Valid_Lines'Length + 1).all;
            Place : constant Positive := Seed'First + Next (Seed'Length);
            Byte  : constant Character := Alphabet (Alphabet'First + Next (Alphabet'Length));
            Line  : constant String :=
              (case Next (3) is
                  when 0 => Seed (Seed'First .. Place - 1) & Seed (Place + 1 .. Seed'Last),
                  when 1 => Seed (Seed'First .. Place - 1) & Byte & Seed (Place .. Seed'Last),
                  when others => Seed (Seed'First .. Place - 1) & Byte & Seed (Place + 1 .. Seed'Last));
         begin
            if Input_Guard.Inspect (Line, Roomy).Kind = Input_Guard.Clean then
               Reader.Parse (Line, Roomy);
               Assert (Reader.Is_Valid = GNATCOLL.JSON.Read (Line).Success,
                       "the reader " & (if Reader.Is_Valid then "accepts" else "refuses")
                       & " what GNATCOLL.JSON does not: '" & Line & "'");
               Compared := Compared + 1;
            end if;
         end;
      end loop;
      Assert (Compared > 3_000, "most mutants reach the comparison:" & Compared'Image);
   end Test_Mutants_Agree_With_Gnatcoll;

   --  The reader holds a line to the input guard's rules as it reads it:
   --  over mutants of valid documents, with bytes and escapes the guard
   --  refuses among the mutations and limits tight enough to be reached,
   --  the reader accepts a line exactly when Input_Guard.Inspect finds it
   --  Clean and GNATCOLL.JSON parses it, and a line Inspect finds Clean is
   --  never refused for a guard rule.
   procedure Test_Guard_Rules_Held_While_Reading (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      function B (Code : Natural) return String is ([Character'Val (Code)]);
      type Text is access constant String;
      Pieces : constant array (Positive range <>) of Text :=
        [new String'("{"), new String'("}"), new String'("["), new String'("]"), new String'(","),
         new String'(":"), new String'(""""), new String'("\"), new String'("1"), new String'("a"),
         new String'(" "), new String'("\u00e9"), new String'("\uD83D"), new String'("\uDE00"),
         new String'("\uD83D\uDE00"), new String'("\uDBFF\u0041"), new String'(B (16#C3#) & B (16#A9#)),
         new String'(B (16#E4#) & B (16#B8#) & B (16#AD#)), new String'(B (16#F0#) & B (16#9F#) & B (16#98#) & B (16#80#)),
         new String'(B (16#80#)), new String'(B (16#C3#)), new String'(B (16#ED#) & B (16#A0#) & B (16#80#)),
         new String'(B (16#C0#) & B (16#AF#)), new String'(B (16#F4#) & B (16#90#) & B (16#80#) & B (16#80#)),
         new String'(B (16#FF#)), new String'(B (16#1F#)), new String'("[[[["), new String'(",1,2,3")];
      Seeds : constant array (Positive range <>) of Text :=
        [new String'(Valid_Lines (1).all), new String'(Valid_Lines (3).all), new String'(Valid_Lines (6).all),
         new String'("{""t"":""caf" & B (16#C3#) & B (16#A9#) & " \ud83d\ude00 " & B (16#E4#) & B (16#B8#) & B (16#AD#) & """}"),
         new String'("[[1,[2]],{""a"":[3,4]},5]"), new String'("[1,2,3,4,5,6,7,8]"),
         new String'("{""k"":[[[""deep""]]]}")];
      Limit_Sets : constant array (1 .. 2) of Input_Guard.Limits :=
        [Roomy, (Max_Depth => 3, Max_Elements => 8)];
      Guard_Messages : constant array (1 .. 4) of Text :=
        [new String'("invalid UTF-8 in string"), new String'("lone UTF-16 surrogate"),
         new String'("nested too deep"), new String'("too many elements")];
      State    : Long_Long_Integer := 20261130;
      Reader   : Document;
      Accepted, Refused_By_Guard : Natural := 0;

      function Next (Bound : Positive) return Natural is
      begin
         State := (State * 69069 + 1442695041) mod 2**40;
         return Natural ((State / 256) mod Long_Long_Integer (Bound));
      end Next;

      function Mutated (Seed : String) return String is
         Place : constant Positive := Seed'First + Next (Seed'Length);
         Piece : constant String := Pieces (Pieces'First + Next (Pieces'Length)).all;
      begin
         return (case Next (3) is
                    when 0 => Seed (Seed'First .. Place - 1) & Seed (Place + 1 .. Seed'Last),
                    when 1 => Seed (Seed'First .. Place - 1) & Piece & Seed (Place .. Seed'Last),
                    when others => Seed (Seed'First .. Place - 1) & Piece & Seed (Place + 1 .. Seed'Last));
      end Mutated;
   begin
      for Round in 1 .. 6_000 loop
         declare
            Seed   : constant String := Seeds (Round mod Seeds'Length + 1).all;
            Line   : constant String := (if Round mod 5 = 0 then Seed else Mutated (Mutated (Seed)));
            Within : constant Input_Guard.Limits := Limit_Sets (Round mod 2 + 1);
            Clean  : constant Boolean := Input_Guard.Inspect (Line, Within).Kind = Input_Guard.Clean;
         begin
            Reader.Parse (Line, Within);
            Assert (Reader.Is_Valid = (Clean and then GNATCOLL.JSON.Read (Line).Success),
                    "the reader " & (if Reader.Is_Valid then "accepts" else "refuses") & " '" & Line
                    & "' (guard: " & (if Clean then "clean" else "refuses") & ")");
            if Reader.Is_Valid then
               Accepted := Accepted + 1;
            elsif Clean then
               for Message of Guard_Messages loop
                  Assert (Reader.Error_Message /= Message.all,
                          "a line the guard finds clean is refused for a guard rule: '" & Line & "'");
               end loop;
            else
               Refused_By_Guard := Refused_By_Guard + 1;
            end if;
         end;
      end loop;
      Assert (Accepted > 600 and then Refused_By_Guard > 1_500,
              "both outcomes are well represented:" & Accepted'Image & " accepted,"
              & Refused_By_Guard'Image & " refused by the guard");
   end Test_Guard_Rules_Held_While_Reading;

   --  Find_Members passes over most keys by their signatures' bits alone:
   --  over objects of many members, keys alike in length and end bytes,
   --  escaped spellings and duplicates, it must find what Member finds, and
   --  as the unknown member the first whose decoded key is not asked for
   procedure Test_One_Walk_Finds_What_Member_Finds (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Keys : constant Name_List :=
        [new String'("a"), new String'("b"), new String'("ab"), new String'("ba"), new String'("m1"),
         new String'("m2"), new String'("m12"), new String'("m21"), new String'("id"), new String'("_meta"),
         new String'("name"), new String'("nome"), new String'("arguments"), new String'("argumentz"),
         new String'("cursor"), new String'("protocolVersion")];
      State : Natural := 7;
      function Next (Bound : Positive) return Positive is
      begin
         State := Natural ((Long_Long_Integer (State) * 1_103_515_245 + 12_345) mod 2**31);
         return State / 2**8 mod Bound + 1;
      end Next;
      Hex : constant String := "0123456789abcdef";
      --  Key K, sometimes with its first byte escaped (\u00XX)
      function Spelled (K : Positive) return String is
         Word : String renames Keys (K).all;
         Code : constant Natural := Character'Pos (Word (Word'First));
      begin
         return (if Next (3) = 1
                 then "\u00" & Hex (Code / 16 + 1) & Hex (Code mod 16 + 1) & Word (Word'First + 1 .. Word'Last)
                 else Word);
      end Spelled;
   begin
      for Round in 1 .. 200 loop
         declare
            Count  : constant Positive := Next (400);
            Line   : String (1 .. 2 + Count * 40);
            Last   : Natural := 1;
            First_Asked : constant Positive := Next (Keys'Length);
            Asked  : constant Name_List := Keys (First_Asked .. First_Asked - 1 + Next (Keys'Length - First_Asked + 1));
            Reader : Document;
            Found  : Member_Values (Asked'Range);
            Unknown, Child, First_Other : Node_Id := No_Node;
         begin
            Line (1) := '{';
            for Index in 1 .. Count loop
               declare
                  Member_Text : constant String :=
                    (if Index > 1 then "," else "") & '"' & Spelled (Next (Keys'Length)) & """:" & Index'Image;
               begin
                  Line (Last + 1 .. Last + Member_Text'Length) := Member_Text;
                  Last := Last + Member_Text'Length;
               end;
            end loop;
            Last := Last + 1;
            Line (Last) := '}';
            Reader.Parse (Line (1 .. Last), (Max_Depth => 4, Max_Elements => 1_000));
            Assert (Reader.Is_Valid, "the object parses");
            Find_Members (Reader, Line (1 .. Last), Reader.Root, To_Name_Set (Asked), Found, Unknown);
            for K in Asked'Range loop
               Assert (Found (K) = Member (Reader, Line (1 .. Last), Reader.Root, Asked (K).all),
                       "round" & Round'Image & ": member " & Asked (K).all & " as Member finds it");
            end loop;
            Child := First_Child (Reader, Reader.Root);
            while Child /= No_Node and then First_Other = No_Node loop
               if (for all Name of Asked => Key (Reader, Line (1 .. Last), Child) /= Name.all) then
                  First_Other := Child;
               end if;
               Child := Next_Sibling (Reader, Child);
            end loop;
            Assert (Unknown = First_Other, "round" & Round'Image & ": the first member not asked for");
         end;
      end loop;
   end Test_One_Walk_Finds_What_Member_Finds;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Valid_Lines_Parse'Access, "RFC 8259 documents parse");
      Register_Routine (T, Test_Invalid_Lines_Fail'Access, "malformed documents are refused with a column");
      Register_Routine (T, Test_Values_Read_Back'Access, "values read back exactly or decoded");
      Register_Routine (T, Test_Agrees_With_Gnatcoll'Access, "strings decode as GNATCOLL.JSON decodes them");
      Register_Routine (T, Test_Strings_At_Every_Offset'Access, "a string's end is found at every offset");
      Register_Routine (T, Test_Mutants_Agree_With_Gnatcoll'Access,
                        "mutated documents are accepted and refused as GNATCOLL.JSON does");
      Register_Routine (T, Test_Guard_Rules_Held_While_Reading'Access,
                        "the reader accepts only what the input guard finds clean");
      Register_Routine (T, Test_One_Walk_Finds_What_Member_Finds'Access,
                        "one walk finds the members Member finds, among many alike");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Json_Reader");
   end Name;

end Json_Reader_Tests;
