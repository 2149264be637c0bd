with Ada.Containers.Indefinite_Vectors;
with Ada.Numerics.Long_Elementary_Functions;
with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Organs;
with Organs.Morag.Excerpts;
with Organs.Morag.Relevance;
with Organs.Sets;
with Session_Repositories.Memory;
with Session_Repositories.Stored;
with Session_Store;
with Store_Files;
with Test_Organs;
with Turn_Cycle;
with Turn_Service;
with Turn_Thinkers;
with Utf8;

package body Recall_Tests is

   use AUnit.Assertions;
   use type Organs.Morag.Score_Thousandths;
   use type Organs.Morag.Recall_Status;
   use type Organs.Morag.Hit;
   use type Organs.Morag.Recall_Result;
   use type Organs.Morag.Relevance.Score_List;
   use type Turn_Service.Turn_End;

   package Morag renames Organs.Morag;
   package Relevance renames Organs.Morag.Relevance;

   Ranking : aliased constant Relevance.Organ := (null record);

   type Text_Access is access constant String;
   type Text_List is array (Positive range <>) of Text_Access;

   --  A score as a recall spells it: whole part, a point, three digits
   function Image (Score : Morag.Score_Thousandths) return String is
      Digits_Of : constant String := Morag.Score_Thousandths'Image (Score + 1000);
      --  " 1ddd" or more: at least four digits once 1000 is added
   begin
      return Morag.Score_Thousandths'Image (Score / 1000) (2 .. Morag.Score_Thousandths'Image (Score / 1000)'Last)
        & "." & Digits_Of (Digits_Of'Last - 2 .. Digits_Of'Last);
   end Image;

   --  A memory keeping Texts as the turns From, From + 1, ...
   function Kept (Texts : Text_List; From : Positive := 1)
     return Morag.Excerpts.Excerpt_Memory
   is
      Held : Morag.Excerpts.Excerpt_Memory;
   begin
      for Index in Texts'Range loop
         Held.Keep (From + Index - Texts'First, Texts (Index).all, Morag.Max_Depth);
      end loop;
      return Held;
   end Kept;

   --  Held as the store gives it back: its record decoded, without the
   --  index it kept
   function Decoded (Held : Morag.Excerpts.Excerpt_Memory; Turn : Positive)
     return Morag.Excerpts.Excerpt_Memory
   is
      use type Morag.Excerpts.Decode_Status;
      Plain  : Morag.Excerpts.Excerpt_Memory;
      Status : Morag.Excerpts.Decode_Status;
   begin
      Morag.Excerpts.Decode (Morag.Excerpts.Encoded (Held), Turn, Plain, Status);
      Assert (Status = Morag.Excerpts.Decoded, "the record decodes");
      return Plain;
   end Decoded;

   --  The scores against a reference computed here from the texts' word
   --  counts, counted by hand: Okapi BM25, k1 = 1.2, b = 0.75, the IDF
   --  ln (1 + (N - n + 0.5) / (n + 0.5)), over the three texts alone
   procedure Test_Scores_Are_Bm25_Over_The_Session (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Ada.Numerics.Long_Elementary_Functions;
      Held   : constant Morag.Excerpts.Excerpt_Memory :=
        Kept ([new String'("Boats, harbour; BOATS!"), new String'("lemon cake sugar"),
               new String'("harbour at rain")]);
      --  Words: (boats, harbour, boats), (lemon, cake, sugar), (harbour, rain): "at" is too short
      Scores : constant Relevance.Score_List := Relevance.Scores (Held, "the harbour boats");
      Mean   : constant Long_Float := 8.0 / 3.0;
      Idf_Harbour : constant Long_Float := Log (1.0 + (3.0 - 2.0 + 0.5) / (2.0 + 0.5));
      Idf_Boats   : constant Long_Float := Log (1.0 + (3.0 - 1.0 + 0.5) / (1.0 + 0.5));

      function Term (Idf, Tf, Length : Long_Float) return Long_Float is
        (Idf * Tf * 2.2 / (Tf + 1.2 * (0.25 + 0.75 * Length / Mean)));

      function Near (Score : Morag.Score_Thousandths; Expected : Long_Float) return Boolean is
        (abs (Long_Float (Score) - 1000.0 * Expected) <= 1.0);
   begin
      Assert (Scores'Length = 3, "a score for every kept turn");
      Assert (Near (Scores (1), Term (Idf_Boats, 2.0, 3.0) + Term (Idf_Harbour, 1.0, 3.0)),
              "the first text:" & Scores (1)'Image);
      Assert (Scores (2) = 0, "a text sharing no word scores nothing");
      Assert (Near (Scores (3), Term (Idf_Harbour, 1.0, 2.0)), "the third text:" & Scores (3)'Image);
      Assert (Scores (1) > Scores (3), "the text of both words, one twice, ranks first");
   end Test_Scores_Are_Bm25_Over_The_Session;

   procedure Test_Recall_Names_The_Best_Turns (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Held  : constant Morag.Excerpts.Excerpt_Memory :=
        Kept ([new String'("boats harbour boats"), new String'("lemon cake sugar"),
               new String'("harbour rain")], From => 5);
      Given : constant Morag.Recall_Result := Ranking.Recall (Held, "harbour boats");
      Scores : constant Relevance.Score_List := Relevance.Scores (Held, "harbour boats");
   begin
      Assert (Given.Status = Morag.Recalled and then Given.Hit_Last = 2, "two turns share a word");
      Assert (Given.Hits (1) = (Turn => 5, Score => Scores (1)) and then Given.Hits (2) = (Turn => 7, Score => Scores (3)),
              "best first, named by their turns");
      Assert (Given.Text = "turn 5 (score " & Image (Scores (1)) & "): boats harbour boats; turn 7 (score "
                           & Image (Scores (3)) & "): harbour rain",
              "the text says which turns and why: " & Given.Text);
      Assert (Ranking.Recall (Held, "zzz").Text = "" and then Ranking.Recall (Held, "zzz").Hit_Last = 0,
              "no shared word, no recall");
      Assert (Ranking.Recall (Kept ([1 .. 0 => <>]), "harbour").Text = "", "an empty memory recalls nothing");
   end Test_Recall_Names_The_Best_Turns;

   procedure Test_Ties_Go_To_The_Later_Turn (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Held  : constant Morag.Excerpts.Excerpt_Memory :=
        Kept ([new String'("the red door"), new String'("the red door"), new String'("a blue door")]);
      Given : constant Morag.Recall_Result := Ranking.Recall (Held, "red");
   begin
      Assert (Given.Hit_Last = 2 and then Given.Hits (1).Turn = 2 and then Given.Hits (2).Turn = 1,
              "equal scores: the later turn first");
   end Test_Ties_Go_To_The_Later_Turn;

   --  Every turn at its bound: a recall names at most Top turns and stays
   --  within Max_Recall_Bytes; an input is kept to Keep_Bytes, whole
   --  characters; a huge input is ranked by its first Query_Bytes
   procedure Test_Recall_Stays_Within_Its_Bounds (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Held : Morag.Excerpts.Excerpt_Memory;
      Long : constant String := "door " & [1 .. 200_000 => 'x'];
      Twos : constant String :=
        [for Index in 1 .. 600 => Character'Val (if Index mod 2 = 1 then 16#C3# else 16#A9#)];
      --  300 characters of two bytes each
   begin
      for Turn in 1 .. Morag.Max_Depth + 4 loop
         Ranking.Remember (Held, Turn, "door " & Twos);
      end loop;
      Assert (Held.Count = Morag.Max_Depth and then Held.Turn_Of (1) = 5, "the latest Max_Depth turns");
      Assert (Held.Excerpt (1)'Length = Relevance.Keep_Bytes - 1,
              "kept to Keep_Bytes, never cutting a character:" & Held.Excerpt (1)'Length'Image);
      declare
         Given : constant Morag.Recall_Result := Ranking.Recall (Held, Long);
      begin
         Assert (Given.Hit_Last = Relevance.Top, "Top turns at most");
         Assert (Given.Text'Length <= Morag.Max_Recall_Bytes, "within the recall's bound");
         Assert (Given.Hits (1).Turn = Morag.Max_Depth + 4, "equal scores: the latest first");
      end;
      Assert (Ranking.Recall (Held, [1 .. Relevance.Query_Bytes => ' '] & "door").Hit_Last = 0,
              "words past Query_Bytes are not asked");
      declare
         --  A memory as a store another organ wrote may give it back: every
         --  excerpt as long as the memory's bound, not Keep_Bytes
         Wide : Morag.Excerpts.Excerpt_Memory;
         Full : constant String := "door " & [1 .. Morag.Max_Recall_Bytes - 5 => 'y'];
      begin
         for Turn in 1 .. Relevance.Top loop
            Wide.Keep (Turn, Full, Morag.Max_Depth);
         end loop;
         declare
            Given : constant Morag.Recall_Result := Ranking.Recall (Wide, "door");
         begin
            Assert (Given.Hit_Last = Relevance.Top, "every wide turn recalled");
            Assert (Given.Text'Length <= Morag.Max_Recall_Bytes, "wide excerpts too within the recall's bound");
         end;
      end;
   end Test_Recall_Stays_Within_Its_Bounds;

   ------------------------------------------------------------------------
   --  Through the turn service, over both repositories

   Path : constant String := "tests/ada/obj/recall-test.db";

   function Relevance_Set return Organs.Sets.Organ_Set is
     ((Test_Organs.Stub_Set with delta Morag => Ranking'Access));

   function Opened_Store return Session_Repositories.Repository_Access is
      Stored : constant Session_Repositories.Stored.Stored_Access := new Session_Repositories.Stored.Repository;
      Result : Session_Store.Outcome;
   begin
      Stored.Open (Path, Capacity => 100, Busy_Timeout_Ms => 20, Full_Sync => False, Result => Result);
      Assert (not Result.Failed, "the store opens");
      return Session_Repositories.Repository_Access (Stored);
   end Opened_Store;

   Words : constant Text_List :=
     [new String'("harbour"), new String'("sugar"), new String'("rain"), new String'("bicycle"),
      new String'("lemon"), new String'("storm")];

   Rooms : constant := 7;

   --  Turn Number of a seeded script over Rooms sessions sharing Words:
   --  its room, and an input that starts with the room's name
   procedure Scripted (Number : Positive; Room : out Positive; Input : out Text_Access) is
      State : Natural := Number * 7919 mod 10_007;

      function Next return Natural is
      begin
         State := (State * 1103 + 12_345) mod 65_536;
         return State / 16;
      end Next;
   begin
      Room := Next mod Rooms + 1;
      Input := new String'("room" & Room'Image & " says " & Words (Next mod Words'Length + 1).all & " "
                           & Words (Next mod Words'Length + 1).all & " " & Words (Next mod Words'Length + 1).all);
   end Scripted;

   type Details is array (Positive range <>) of Text_Access;

   --  The sense steps of turns From .. To of the script, through Sessions
   procedure Run_Script (Sessions : Session_Repositories.Repository_Access; From, To : Positive;
                         Seen : in out Details)
   is
      Turns  : Turn_Service.Service;
      Trace  : Turn_Cycle.Turn_Trace;
      Result : Turn_Service.Outcome;
      Room   : Positive;
      Input  : Text_Access;
   begin
      Turns.Configure (Relevance_Set, Test_Organs.Stub_Curve, Sessions, new Turn_Thinkers.Stub_Thinker);
      for Number in From .. To loop
         Scripted (Number, Room, Input);
         Turns.Take_Turn (Turn_Thinkers.None, "1", "", "", "u" & Room'Image, "c", "s", Input.all, Trace, Result);
         Assert (Result.Ended = Turn_Service.Answered, "the turn is answered");
         Seen (Number) := new String'(Turn_Cycle.Text_Of (Trace, Trace.Steps (2).Detail));
      end loop;
   end Run_Script;

   --  L1 with many sessions sharing words: every turn a recall names is
   --  the same session's; the store, across a restart, recalls what the
   --  body's memory recalls
   procedure Test_Both_Repositories_Recall_Alike_And_Only_Their_Session
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      Last       : constant := 140;
      In_Memory  : Details (1 .. Last);
      On_Store   : Details (1 .. Last);
      Named      : Natural := 0;
   begin
      Run_Script (Session_Repositories.Repository_Access
                    (Session_Repositories.Memory.Memory_Access'(new Session_Repositories.Memory.Repository)),
                  1, Last, In_Memory);
      Store_Files.Remove (Path);
      for Half in 1 .. 2 loop
         declare
            Sessions : constant Session_Repositories.Repository_Access := Opened_Store;
         begin
            Run_Script (Sessions, (if Half = 1 then 1 else Last / 2 + 1), (if Half = 1 then Last / 2 else Last),
                        On_Store);
            Sessions.Close;
         end;
      end loop;
      Store_Files.Remove (Path);
      for Number in 1 .. Last loop
         Assert (In_Memory (Number).all = On_Store (Number).all,
                 "turn" & Number'Image & ": the same recall: " & In_Memory (Number).all & " | "
                 & On_Store (Number).all);
         declare
            Room  : Positive;
            Input : Text_Access;
            Text  : constant String := In_Memory (Number).all;
            Mark  : Natural := Ada.Strings.Fixed.Index (Text, "): ");
         begin
            Scripted (Number, Room, Input);
            while Mark > 0 loop
               Named := Named + 1;
               Assert (Ada.Strings.Fixed.Index (Text (Mark + 3 .. Text'Last), "room" & Room'Image & " says")
                       = Mark + 3,
                       "turn" & Number'Image & " names only its own session's turns: " & Text);
               Mark := Ada.Strings.Fixed.Index (Text, "): ", Mark + 3);
            end loop;
         end;
      end loop;
      Assert (Named > Last, "the sessions shared words, so recalls named many turns:" & Named'Image);
   end Test_Both_Repositories_Recall_Alike_And_Only_Their_Session;

   --  A ranking organ's memory keeps an index of its words beside its
   --  texts (Index_Words), extended as it keeps and forgets; a memory
   --  without one (one decoded from the store, or kept by another organ)
   --  builds it from its texts.  Both must score alike, through evictions
   --  and a gap in the turns, on a cycle of inputs sharing words.
   procedure Test_Kept_Word_Index_Scores_As_The_Texts (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Inputs : constant Text_List :=
        [new String'("the harbour boats sail out at dawn"), new String'("Lemon cake: SUGAR, sugar and butter"),
         new String'("rain over the harbour, rain again"), new String'("a moon tower on the hill"),
         new String'("how much sugar goes into lemon cake?"), new String'("")];
      Listed : Morag.Excerpts.Excerpt_Memory;
      Turn   : Positive := 1;
   begin
      for Step in 1 .. 3 * Morag.Max_Depth loop
         Turn := Turn + (if Step = 2 * Morag.Max_Depth then 2 else 1);
         --  one gap: the memory forgets every older turn
         Ranking.Remember (Listed, Turn, Inputs (1 + Step mod Inputs'Length).all);
         declare
            Plain : constant Morag.Excerpts.Excerpt_Memory := Decoded (Listed, Turn);
         begin
            for Query of Inputs loop
               Assert (Relevance.Scores (Listed, Query.all) = Relevance.Scores (Plain, Query.all),
                       "the same scores with and without a kept index, step" & Step'Image);
            end loop;
         end;
      end loop;
   end Test_Kept_Word_Index_Scores_As_The_Texts;

   --  Read_Excerpt and Read_Word_Index give a ranking the bytes in place:
   --  exactly what Excerpt and Word_Index copy out, for a memory with a
   --  kept index and one without, through evictions
   procedure Test_In_Place_Reads_Give_The_Copies (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      use Ada.Strings.Unbounded;
      Inputs : constant Text_List :=
        [new String'("the harbour boats sail out at dawn"), new String'("Lemon cake: SUGAR, sugar and butter"),
         new String'(""), new String'("a moon tower on the hill, " & Character'Val (16#C3#) & Character'Val (16#A9#) & "t")];
      Listed : Morag.Excerpts.Excerpt_Memory;
      Read   : Unbounded_String;

      procedure Take (Bytes : String) is
      begin
         Read := To_Unbounded_String (Bytes);
      end Take;

      procedure Check (Held : Morag.Excerpts.Excerpt_Memory; Step : Positive) is
      begin
         for Index in 1 .. Held.Count loop
            Read := To_Unbounded_String ("not read");
            Held.Read_Excerpt (Index, Take'Access);
            Assert (To_String (Read) = Held.Excerpt (Index),
                    "excerpt" & Index'Image & " read in place as copied, step" & Step'Image);
         end loop;
         Read := To_Unbounded_String ("not read");
         Held.Read_Word_Index (Take'Access);
         Assert (To_String (Read) = Held.Word_Index, "the word index read in place as copied, step" & Step'Image);
      end Check;
   begin
      for Step in 1 .. 2 * Morag.Max_Depth loop
         Ranking.Remember (Listed, Step, Inputs (1 + Step mod Inputs'Length).all);
         Check (Listed, Step);
         Check (Decoded (Listed, Step), Step);
      end loop;
      Assert (Listed.Count = Morag.Max_Depth, "the memory forgot its oldest turns:" & Listed.Count'Image);
   end Test_In_Place_Reads_Give_The_Copies;

   --  Words are matched on a part of their hash, then on their bytes:
   --  "aufgy" and "dctcd" have the same low 32 bits of FNV-1a, and so have
   --  "harboursdotcy" and "harboursiafgd", which share their first 8 bytes
   --  too (found by a search over all such words); neither pair may count
   --  as one word
   procedure Test_Hash_Collisions_Change_No_Score (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Held : Morag.Excerpts.Excerpt_Memory;
   begin
      Ranking.Remember (Held, 1, "aufgy harboursdotcy");
      Ranking.Remember (Held, 2, "lemon cake");
      Assert (Relevance.Scores (Held, "dctcd harboursiafgd") = [0, 0], "colliding words score nothing");
      Assert (Ranking.Recall (Held, "dctcd harboursiafgd").Hit_Last = 0, "and recall nothing");
      Assert (Relevance.Scores (Held, "aufgy") (1) > 0 and then Relevance.Scores (Held, "harboursdotcy") (1) > 0,
              "the words themselves match");
      Assert (Relevance.Scores (Held, "aufgy dctcd") = Relevance.Scores (Held, "aufgy"),
              "a query of both words of a pair counts them apart");
   end Test_Hash_Collisions_Change_No_Score;

   ------------------------------------------------------------------------
   --  The index against BM25 by brute force: every kept text's words
   --  counted afresh, by this test's own tokenizer, for every query

   package Word_Vectors is new Ada.Containers.Indefinite_Vectors (Positive, String);

   --  The words of Text: maximal runs of word bytes, 3 bytes or more, folded
   function Words_Of (Text : String) return Word_Vectors.Vector is
      Result : Word_Vectors.Vector;
      First  : Positive := Text'First;
   begin
      while First <= Text'Last loop
         if Organs.Is_Word_Byte (Text (First)) then
            declare
               Last : Positive := First;
            begin
               while Last < Text'Last and then Organs.Is_Word_Byte (Text (Last + 1)) loop
                  Last := Last + 1;
               end loop;
               if Last - First + 1 >= 3 then
                  Result.Append (Organs.Folded (Text (First .. Last)));
               end if;
               First := Last + 1;
            end;
         else
            First := First + 1;
         end if;
      end loop;
      return Result;
   end Words_Of;

   function Times_In (Words : Word_Vectors.Vector; Word : String) return Natural is
      Times : Natural := 0;
   begin
      for Each of Words loop
         if Each = Word then
            Times := Times + 1;
         end if;
      end loop;
      return Times;
   end Times_In;

   --  BM25 as docs/recall.md states it, over the query's first Query_Bytes,
   --  summed over its distinct words in the order of their first
   --  occurrence, in thousandths
   function Brute_Force (Held : Morag.Memory'Class; Query : String) return Relevance.Score_List is
      use Ada.Numerics.Long_Elementary_Functions;
      K1    : constant Long_Float := 1.2;
      B     : constant Long_Float := 0.75;
      Count : constant Natural := Held.Count;
      Texts : array (1 .. Count) of Word_Vectors.Vector;
      Sums  : array (1 .. Count) of Long_Float := [others => 0.0];
      Asked : Word_Vectors.Vector;
      Total : Natural := 0;
   begin
      for Text in Texts'Range loop
         Texts (Text) := Words_Of (Held.Excerpt (Text));
         Total := Total + Natural (Texts (Text).Length);
      end loop;
      for Word of Words_Of (Query (Query'First .. Query'First - 1 + Utf8.Prefix_Length (Query, Relevance.Query_Bytes)))
      loop
         if not Asked.Contains (Word) then
            Asked.Append (Word);
         end if;
      end loop;
      if Total > 0 then
         for Word of Asked loop
            declare
               Holding : Natural := 0;
               Mean    : constant Long_Float := Long_Float (Total) / Long_Float (Count);
            begin
               for Text of Texts loop
                  Holding := Holding + (if Times_In (Text, Word) > 0 then 1 else 0);
               end loop;
               for Text in Texts'Range loop
                  if Times_In (Texts (Text), Word) > 0 then
                     declare
                        Idf : constant Long_Float :=
                          Log (1.0 + (Long_Float (Count - Holding) + 0.5) / (Long_Float (Holding) + 0.5));
                        Tf  : constant Long_Float := Long_Float (Times_In (Texts (Text), Word));
                     begin
                        Sums (Text) := Sums (Text)
                          + Idf * Tf * (K1 + 1.0)
                            / (Tf + K1 * (1.0 - B + B * Long_Float (Texts (Text).Length) / Mean));
                     end;
                  end if;
               end loop;
            end;
         end loop;
      end if;
      return [for Text in 1 .. Count =>
                Morag.Score_Thousandths
                  (Long_Float'Min (Sums (Text) * 1000.0, Long_Float (Morag.Score_Thousandths'Last)))];
   end Brute_Force;

   --  Random sessions of words that share prefixes, hashes (aufgy, dctcd)
   --  and cases, of lengths that evict and cut at Keep_Bytes, with gaps in
   --  their turns: the index's scores are the brute force's exactly, and
   --  the recall names the brute force's best Top turns, the later first
   --  among equals, whether the memory kept its index or was decoded
   procedure Test_Index_Ranks_As_Brute_Force_Bm25 (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Vocabulary : constant Text_List :=
        [new String'("harbour"), new String'("Harbour"), new String'("HARBOURS"), new String'("harboursdotcy"),
         new String'("harboursiafgd"), new String'("aufgy"), new String'("dctcd"), new String'("sugar"),
         new String'("rain"), new String'("at"), new String'("a"), new String'("the"), new String'("lemon"),
         new String'("caf" & Character'Val (16#C3#) & Character'Val (16#A9#)), new String'("moon"),
         new String'("tonight?"), new String'("x1x"), new String'("butter,"), new String'("...")];
      State : Natural := 24;

      function Next (Below : Positive) return Natural is
      begin
         State := Natural ((Long_Long_Integer (State) * 1_103_515_245 + 12_345) mod 2 ** 31);
         return (State / 65_536) mod Below;
      end Next;

      function Sentence return String is
         Words : constant Natural := Next (90);
         Text  : Ada.Strings.Unbounded.Unbounded_String;
      begin
         for Word in 1 .. Words loop
            Ada.Strings.Unbounded.Append (Text, Vocabulary (1 + Next (Vocabulary'Length)).all);
            Ada.Strings.Unbounded.Append (Text, (if Next (5) = 0 then "  " else " "));
         end loop;
         return Ada.Strings.Unbounded.To_String (Text);
      end Sentence;

      Compared : Natural := 0;
      Ranked   : Natural := 0;
   begin
      for Session in 1 .. 12 loop
         declare
            Held : Morag.Excerpts.Excerpt_Memory;
            Turn : Positive := 1;
         begin
            for Step in 1 .. 40 loop
               Turn := Turn + (if Next (25) = 0 then 3 else 1);
               Ranking.Remember (Held, Turn, Sentence);
               declare
                  Plain : constant Morag.Excerpts.Excerpt_Memory := Decoded (Held, Turn);
               begin
                  for Query in 1 .. 4 loop
                     declare
                        Asked    : constant String := Sentence;
                        Expected : constant Relevance.Score_List := Brute_Force (Held, Asked);
                        Given    : constant Morag.Recall_Result := Ranking.Recall (Held, Asked);
                        Rank     : Natural := 0;
                        Taken    : array (Expected'Range) of Boolean := [others => False];
                     begin
                        Assert (Relevance.Scores (Held, Asked) = Expected,
                                "the index scores as BM25 over the texts: " & Asked);
                        Assert (Relevance.Scores (Plain, Asked) = Expected, "and so does a decoded memory");
                        Assert (Ranking.Recall (Plain, Asked) = Given, "the same recall either way");
                        Compared := Compared + 1;
                        --  The best positive score left, the later turn on a tie
                        loop
                           declare
                              Best : Natural := 0;
                           begin
                              for Text in reverse Expected'Range loop
                                 if not Taken (Text) and then Expected (Text) > 0
                                   and then (Best = 0 or else Expected (Text) > Expected (Best))
                                 then
                                    Best := Text;
                                 end if;
                              end loop;
                              exit when Best = 0 or else Rank = Relevance.Top;
                              Rank := Rank + 1;
                              Taken (Best) := True;
                              Assert (Rank <= Given.Hit_Last
                                      and then Given.Hits (Rank) = (Turn => Held.Turn_Of (Best),
                                                                    Score => Expected (Best)),
                                      "hit" & Rank'Image & " is the brute force's: " & Given.Text);
                           end;
                        end loop;
                        Assert (Given.Hit_Last = Rank, "no more hits than the brute force ranks");
                        Ranked := Ranked + Rank;
                     end;
                  end loop;
               end;
            end loop;
         end;
      end loop;
      Assert (Compared = 12 * 40 * 4 and then Ranked > Compared, "the sessions' queries found turns to rank");
   end Test_Index_Ranks_As_Brute_Force_Bm25;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Scores_Are_Bm25_Over_The_Session'Access, "scores are BM25 over the session's turns");
      Register_Routine (T, Test_Recall_Names_The_Best_Turns'Access, "a recall names the best turns and scores");
      Register_Routine (T, Test_Ties_Go_To_The_Later_Turn'Access, "equal scores recall the later turn first");
      Register_Routine (T, Test_Recall_Stays_Within_Its_Bounds'Access, "a recall stays within k and bytes");
      Register_Routine (T, Test_Kept_Word_Index_Scores_As_The_Texts'Access,
                        "a kept word index scores as the texts it indexes");
      Register_Routine (T, Test_Index_Ranks_As_Brute_Force_Bm25'Access,
                        "the index ranks as BM25 computed from the texts, over random sessions");
      Register_Routine (T, Test_Hash_Collisions_Change_No_Score'Access, "hash collisions change no score");
      Register_Routine (T, Test_In_Place_Reads_Give_The_Copies'Access, "in-place reads give what the copies give");
      Register_Routine (T, Test_Both_Repositories_Recall_Alike_And_Only_Their_Session'Access,
                        "both repositories recall alike, each session only its own turns");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Recall");
   end Name;

end Recall_Tests;
