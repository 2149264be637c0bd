with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Interfaces;
with Organs;
with Organs.Word_Search;

package body Word_Search_Tests is

   use AUnit.Assertions;
   use Ada.Strings.Unbounded;
   use type Interfaces.Unsigned_32;

   package Search renames Organs.Word_Search;

   Long_Enough : constant := 20_000;
   --  Padding that adds no word but more work than the direct search is
   --  given for the texts below (19 positions a byte of them, some 50
   --  bytes): both ways are held to one answer

   function Padded (Input : String) return String is
     (Input & [1 .. Long_Enough => ' ']);

   --  Texts given one by one, kept back to back as Morag keeps them
   type Text_List is array (Positive range <>) of Unbounded_String;

   function Joined (Texts : Text_List) return String is
      All_Of : Unbounded_String;
   begin
      for Text of Texts loop
         Append (All_Of, Text);
      end loop;
      return To_String (All_Of);
   end Joined;

   function Ends_Of (Texts : Text_List) return Search.Text_Ends is
      Ends : Search.Text_Ends (1 .. Texts'Length);
      Last : Natural := 0;
   begin
      for K in Ends'Range loop
         Last := Last + Length (Texts (Texts'First + K - 1));
         Ends (K) := Last;
      end loop;
      return Ends;
   end Ends_Of;

   function Latest (Texts : Text_List; Input : String) return Natural is
     (Search.Latest_Sharing (Joined (Texts), Ends_Of (Texts), Input));

   --  The definition spelt out with the standard library: every word of
   --  the input, folded, looked for in every folded text
   function Oracle (Texts : Text_List; Input : String) return Natural is
      Folded_Input : constant String := Organs.Folded (Input);
   begin
      for K in reverse Texts'Range loop
         declare
            Text  : constant String := Organs.Folded (To_String (Texts (K)));
            Start : Natural := 0;
         begin
            for Index in Folded_Input'First .. Folded_Input'Last + 1 loop
               if Index <= Folded_Input'Last and then Organs.Is_Word_Byte (Folded_Input (Index)) then
                  if Start = 0 then
                     Start := Index;
                  end if;
               elsif Start /= 0 then
                  if Index - Start >= 3
                    and then Ada.Strings.Fixed.Index (Text, Folded_Input (Start .. Index - 1)) > 0
                  then
                     return K;
                  end if;
                  Start := 0;
               end if;
            end loop;
         end;
      end loop;
      return 0;
   end Oracle;

   function "+" (Text : String) return Unbounded_String renames To_Unbounded_String;

   --  A linear congruential generator: the random cases are the same on
   --  every run, each test setting its own seed
   Seed : Interfaces.Unsigned_32 := 1;

   function Next (Bound : Positive) return Positive is
   begin
      Seed := Seed * 1_103_515_245 + 12_345;
      return Natural (Interfaces.Shift_Right (Seed, 8) mod Interfaces.Unsigned_32 (Bound)) + 1;
   end Next;

   function Random_Text (Alphabet : String; Longest : Natural) return String is
      Length : constant Natural := Next (Longest + 1) - 1;
   begin
      return [for I in 1 .. Length => Alphabet (Next (Alphabet'Length))];
   end Random_Text;

   procedure Test_Pinned (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Memory : constant Text_List := [+"the moon is full", +"a red sun", +"Sunday, moonlight"];
      E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);
   begin
      for Long in Boolean loop
         declare
            function At_Length (Input : String) return String is
              (if Long then Padded (Input) else Input);
            Way : constant String := (if Long then " (indexed)" else " (directly)");
         begin
            Assert (Latest (Memory, At_Length ("moon")) = 3, "the latest text holding a word wins" & Way);
            Assert (Latest (Memory, At_Length ("full moon?")) = 3, "whichever word it is" & Way);
            Assert (Latest (Memory, At_Length ("FULL")) = 1, "an older text when only it holds one" & Way);
            Assert (Latest (Memory, At_Length ("red")) = 2, "a word of three bytes counts" & Way);
            Assert (Latest (Memory, At_Length ("is a")) = 0, "shorter words do not" & Way);
            Assert (Latest (Memory, At_Length ("sunday")) = 3, "ASCII case is folded" & Way);
            Assert (Latest (Memory, At_Length ("nli")) = 3, "a word may stand inside a longer one" & Way);
            Assert (Latest (Memory, At_Length ("fullared")) = 0, "all of a word must stand in a text" & Way);
            Assert (Latest (Memory, At_Length ("fulla")) = 0,
                    "never across the end of one text and the start of the next" & Way);
            Assert (Latest (Memory, At_Length ("moon-is")) = 3, "punctuation ends a word" & Way);
            Assert (Latest ([+"caf" & E_Acute], At_Length ("CAF" & E_Acute)) = 1,
                    "non-ASCII bytes are part of a word" & Way);
            Assert (Latest ([+"caf" & E_Acute], At_Length ("cafe")) = 0, "and are compared as they are" & Way);
            Assert (Latest ([1 .. 0 => +""], At_Length ("moon")) = 0, "no texts, no match" & Way);
            Assert (Latest ([+"", +"moon", +""], At_Length ("moon")) = 2, "empty texts hold nothing" & Way);
         end;
      end loop;
   end Test_Pinned;

   --  Random texts and inputs over a small alphabet (so that words are
   --  shared often, in part and in whole), at lengths that the direct
   --  search answers and lengths that need the index, against the oracle
   procedure Test_Matches_The_Oracle (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Alphabet : constant String := "abAB c" & Character'Val (16#C3#) & ".";
   begin
      Seed := 12_345;
      for Trial in 1 .. 3_000 loop
         declare
            Count : constant Positive := Next (16);
            Texts : Text_List (1 .. Count);
            Input : constant String := Random_Text (Alphabet, (case Trial mod 3 is when 0 => 40, when 1 => 400, when others => 4_000));
         begin
            for Text of Texts loop
               Text := +Random_Text (Alphabet, 24);
            end loop;
            Assert (Latest (Texts, Input) = Oracle (Texts, Input),
                    "trial" & Trial'Image & ": input """ & Input & """");
         end;
      end loop;
   end Test_Matches_The_Oracle;

   --  Words made to defeat a naive search (long runs that almost match) and
   --  random ones, against Ada.Strings.Fixed.Index on the folded text
   procedure Test_Occurs_Folded (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);

      Run : constant String (1 .. 300) := [others => 'A'];
   begin
      Seed := 777;
      Assert (Search.Occurs_Folded ("remember", "Please REMEMBER this"), "a folded word inside a text");
      Assert (not Search.Occurs_Folded ("Remember", "remember"), "the word's own bytes are not folded");
      Assert (not Search.Occurs_Folded ("aaab", Run), "a run that almost matches everywhere");
      Assert (Search.Occurs_Folded ("aaab", Run & "b"), "and matches at its very end");
      Assert (Search.Occurs_Folded ("abab", "aabababab"), "overlapping candidates");
      Assert (not Search.Occurs_Folded ("word", "wor"), "a word longer than the text");
      Assert (Search.Occurs_Folded ("", ""), "the empty word stands everywhere");
      for Trial in 1 .. 5_000 loop
         declare
            Word : constant String := Random_Text ("ab", 6);
            Text : constant String := Random_Text ("abAB", 40);
         begin
            Assert (Search.Occurs_Folded (Word, Text)
                    = (Word'Length = 0 or else Ada.Strings.Fixed.Index (Organs.Folded (Text), Word) > 0),
                    "trial" & Trial'Image & ": """ & Word & """ in """ & Text & """");
         end;
      end loop;
   end Test_Occurs_Folded;

   --  Several words at once, in texts short enough to be searched a word at
   --  a time and long enough for the automaton, against the oracle; words
   --  that are suffixes and prefixes of each other, repeated and empty
   procedure Test_Find_Folded (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);

      function Expected (Word, Text : String) return Boolean is
        (Word'Length = 0 or else Ada.Strings.Fixed.Index (Organs.Folded (Text), Word) > 0);

      Fixed : constant Search.Word_List :=
        [new String'("a"), new String'("aa"), new String'("ba"), new String'("aab"), new String'("aa"),
         new String'("b" & Character'Val (16#C3#)), new String'("")];
   begin
      Seed := 4_242;
      for Trial in 1 .. 2_000 loop
         declare
            Count : constant Positive := Next (6);
            Words : constant Search.Word_List := [for I in 1 .. Count => new String'(Random_Text ("ab", 5))];
            Text  : constant String := Random_Text ("abAB" & Character'Val (16#C3#), (if Trial mod 2 = 0 then 8 else 600));
            Found : Search.Word_Flags (Words'Range);
            All_Found : Search.Word_Flags (Fixed'Range);
         begin
            Search.Find_Folded (Words, Text, Found);
            for K in Words'Range loop
               Assert (Found (K) = Expected (Words (K).all, Text),
                       "trial" & Trial'Image & ": """ & Words (K).all & """ in """ & Text & """");
            end loop;
            Search.Find_Folded (Fixed, Text, All_Found);
            for K in Fixed'Range loop
               Assert (All_Found (K) = Expected (Fixed (K).all, Text),
                       "trial" & Trial'Image & ", nested words: """ & Fixed (K).all & """ in """ & Text & """");
            end loop;
         end;
      end loop;
   end Test_Find_Folded;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Pinned'Access, "word search: pinned answers, directly and indexed");
      Register_Routine (T, Test_Matches_The_Oracle'Access, "word search: matches the definition on random texts");
      Register_Routine (T, Test_Find_Folded'Access, "word search: several words in one pass, as the standard library finds them");
      Register_Routine (T, Test_Occurs_Folded'Access, "word search: one word in a text, as the standard library finds it");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Organs.Word_Search");
   end Name;

end Word_Search_Tests;
