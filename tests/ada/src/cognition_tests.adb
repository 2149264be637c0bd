with Ada.Containers.Indefinite_Ordered_Sets;
with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Organs;
with Organs.Cognition;

package body Cognition_Tests is

   use AUnit.Assertions;
   use Ada.Strings.Unbounded;

   subtype Millis is Organs.Millis;

   function Score (Output, Thought : String) return Millis is
     (Organs.To_Millis (Organs.Cognition.Cohere (Output, Thought).Score));

   function Drift (Output, Thought : String) return Millis is
     (Organs.To_Millis (Organs.Cognition.Cohere (Output, Thought).Drift));

   --  "w1 w2 ... " from First to Last
   function Numbered
     (First, Last : Positive; Prefix : String := "w") return String
   is
      Text : Unbounded_String;
   begin
      for Number in First .. Last loop
         Append (Text, Prefix & Ada.Strings.Fixed.Trim (Number'Image, Ada.Strings.Left) & " ");
      end loop;
      return To_String (Text);
   end Numbered;

   --  The words of each text spelt out, as the coherence check defines
   --  them, rather than hashed: an oracle that shares nothing with the
   --  body's table but the word and the limit.
   package Word_Sets is new Ada.Containers.Indefinite_Ordered_Sets (String);

   Max_Words : constant := 512;

   function Words_Of (Text : String) return Word_Sets.Set is
      Words : Word_Sets.Set;
      Word  : Unbounded_String;

      procedure Keep is
      begin
         if Length (Word) > 0 and then Natural (Words.Length) < Max_Words then
            Words.Include (To_String (Word));
         end if;
         Word := Null_Unbounded_String;
      end Keep;
   begin
      for C of Text loop
         if Organs.Is_Word_Byte (C) then
            Append (Word, Organs.Folded (C));
         else
            Keep;
         end if;
      end loop;
      Keep;
      return Words;
   end Words_Of;

   function Oracle (Output, Thought : String) return Millis is
      Said          : constant Word_Sets.Set := Words_Of (Output);
      Thought_Words : constant Word_Sets.Set := Words_Of (Thought);
      Both          : constant Natural :=
        Natural (Word_Sets.Intersection (Said, Thought_Words).Length);
      Either        : constant Natural :=
        Natural (Word_Sets.Union (Said, Thought_Words).Length);
   begin
      return (if Either = 0 then 1000 else Both * 1000 / Either);
   end Oracle;

   procedure Test_Pinned_Scores (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);
      E_Acute_Capital : constant String := Character'Val (16#C3#) & Character'Val (16#89#);
   begin
      Assert (Score ("", "") = 1000, "two empty texts agree fully");
      Assert (Drift ("", "") = 0, "and do not drift");
      Assert (Score ("...  --  !", "?") = 1000, "texts without words agree fully");
      Assert (Score ("moon", "") = 0 and then Score ("", "moon") = 0, "an empty text shares nothing");
      Assert (Drift ("moon", "") = 1000, "and drifts fully");
      Assert (Score ("one two three", "two three four") = 500, "two shared of four");
      Assert (Score ("a b c", "a") = 333, "the score rounds down");
      Assert (Score ("the the THE The word Word", "the word") = 1000,
              "repeated words and their cases count once");
      Assert (Score ("moon", "moon Moon moon") = 1000, "a thought's repeats of a shared word count once");
      Assert (Score ("the the the moon", "the sun sun sun") = 333,
              "repeats count once on both sides");
      Assert (Score ("Moon TONIGHT", "moon tonight") = 1000, "ASCII case is folded");
      Assert (Score ("moon-tonight", "tonight, moon!") = 1000, "punctuation separates words");
      Assert (Score ("moon2night", "moon 2night") = 0, "digits are part of a word");
      Assert (Score ("caf" & E_Acute, "CAF" & E_Acute) = 1000, "non-ASCII bytes are part of a word");
      Assert (Score ("caf" & E_Acute, "caf") = 0, "and make it another word");
      Assert (Score ("caf" & E_Acute, "caf" & E_Acute_Capital) = 0, "non-ASCII letters are not folded");
      Assert (Score (E_Acute & " x", E_Acute) = 500, "a word of non-ASCII bytes alone is a word");
      Assert (Score ("end word", "word") = 500 and then Score ("word end.", "word") = 500,
              "a word that ends the text counts as any other");
      Assert (Score ("x", "x") = 1000 and then Score ("x ", " x") = 1000, "one-byte texts");
   end Test_Pinned_Scores;

   --  At most 512 distinct words of each text are compared, the first ones
   --  in the text; repeats do not use up the limit.
   procedure Test_Word_Limit (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Many     : constant String := Numbered (1, 600);
      Repeated : constant String := Numbered (1, 300) & Numbered (1, 300) & Numbered (301, 600);
   begin
      Assert (Score (Many, Numbered (1, 512)) = 1000, "the first 512 words are all compared");
      Assert (Score (Many, Numbered (513, 600)) = 0, "later words are not");
      Assert (Score (Many, "w1 w600") = 1000 / 513, "one shared of the 512 kept and the one beyond");
      Assert (Score (Many, Many) = 1000, "a long text agrees with itself");
      Assert (Score (Numbered (1, 600, "x"), Numbered (1, 600, "y")) = 0, "two long texts with no word in common");
      Assert (Score ("w513", Many) = 0, "the thought's words past its 512th distinct one are not compared");
      Assert (Score ("w512", Many) = 1000 / 512, "its 512th is");
      Assert (Score (Repeated, Numbered (1, 512)) = 1000, "repeats do not use up the limit");
      Assert (Score (Numbered (1, 512), Repeated) = 1000, "on either side");
      Assert (Score ("z " & Many, "z") = 1000 / 512, "the word first in the text is kept");
      Assert (Score (Many & " z", "z") = 0, "a word after the 512th distinct one is not");
   end Test_Word_Limit;

   --  Against the oracle over texts drawn from a small alphabet (so words
   --  repeat, in both cases) with separators, digits and non-ASCII bytes,
   --  short and long, some far past the word limit.
   procedure Test_Matches_The_Oracle (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Alphabet : constant String :=
        "abAB01 " & Character'Val (16#C3#) & Character'Val (16#A9#) & ".-" & ASCII.LF;
      State : Long_Long_Integer := 4242;

      function Next (Bound : Positive) return Natural is
      begin
         State := (State * 1103515245 + 12345) mod 2**31;
         --  A linear congruential generator: the same texts every run
         return Natural ((State / 16) mod Long_Long_Integer (Bound));
      end Next;

      function Text_Of (Length : Natural) return String is
         Spaced : constant Boolean := Next (2) = 0;
      begin
         return [for Index in 1 .. Length =>
                   (if Spaced and then Next (3) = 0 then ' '
                    else Alphabet (Alphabet'First + Next (Alphabet'Length)))];
      end Text_Of;
   begin
      for Round in 1 .. 3_000 loop
         declare
            Limit   : constant Positive := (if Round mod 10 = 0 then 6_000 else 120);
            Output  : constant String := Text_Of (Next (Limit));
            Thought : constant String := Text_Of (Next (Limit));
         begin
            Assert (Score (Output, Thought) = Oracle (Output, Thought),
                    "scored as the spelt-out words are:" & Round'Image);
         end;
      end loop;
   end Test_Matches_The_Oracle;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Pinned_Scores'Access, "coherence: pinned scores");
      Register_Routine (T, Test_Word_Limit'Access, "coherence: the first 512 distinct words of a text");
      Register_Routine (T, Test_Matches_The_Oracle'Access, "coherence: matches spelt-out word sets");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Cognition");
   end Name;

end Cognition_Tests;
