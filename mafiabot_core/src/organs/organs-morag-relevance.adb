with Ada.Containers.Generic_Array_Sort;
with Ada.Numerics.Long_Elementary_Functions;
with Fnv_Hash;
with Organs.Word_Search;
with Utf8;

package body Organs.Morag.Relevance is

   use type Fnv_Hash.Hash;

   K1 : constant Long_Float := 1.2;
   B  : constant Long_Float := 0.75;

   Min_Word : constant := Organs.Word_Search.Min_Word_Bytes;

   Max_Text_Words : constant := Max_Recall_Bytes / (Min_Word + 1) + 1;
   --  A word takes Min_Word bytes and a byte that ends it
   Max_Postings   : constant := Max_Depth * Max_Text_Words;
   Max_Query      : constant := Query_Bytes / (Min_Word + 1) + 1;

   type Word is record
      Hash  : Fnv_Hash.Hash := 0;
      Text  : Natural := 0;
      --  0 for the query, else the excerpt it stands in
      First : Positive := 1;
      Last  : Natural := 0;
      --  Where it stands, in the query or the excerpts, as folded
   end record;

   function "<" (Left, Right : Word) return Boolean is
     (Left.Hash < Right.Hash
      or else (Left.Hash = Right.Hash and then Left.Text < Right.Text));

   type Word_Array is array (Positive range <>) of Word;

   procedure Sort is new Ada.Containers.Generic_Array_Sort
     (Positive, Word, Word_Array);

   --  Append Text's words to Words (Last), each tagged Tag
   procedure Add_Words
     (Text  : String;
      Tag   : Natural;
      Words : in out Word_Array;
      Last  : in out Natural)
   is
      Index : Positive := Text'First;
   begin
      while Index <= Text'Last loop
         if Is_Word_Byte (Text (Index)) then
            declare
               First : constant Positive := Index;
               Hash  : Fnv_Hash.Hash := Fnv_Hash.Basis;
            begin
               while Index <= Text'Last and then Is_Word_Byte (Text (Index))
               loop
                  Hash := Fnv_Hash.Step (Hash, Folded (Text (Index)));
                  Index := Index + 1;
               end loop;
               if Index - First >= Min_Word then
                  Last := Last + 1;
                  Words (Last) :=
                    (Hash => Hash, Text => Tag, First => First,
                     Last => Index - 1);
               end if;
            end;
         else
            Index := Index + 1;
         end if;
      end loop;
   end Add_Words;

   --  Scores, of Query as folded, over Held's excerpts of Bytes in all
   function Ranked (Held : Memory'Class; Query : String; Bytes : Natural)
     return Score_List
   with Pre => Bytes <= Max_Depth * Max_Recall_Bytes;

   function Scores (Held : Memory'Class; Input : String) return Score_List is

      Count   : constant Natural := Held.Count;
      Query   : constant String :=
        Folded (Input (Input'First .. Input'First - 1
                       + Utf8.Prefix_Length (Input, Query_Bytes)));
      Bytes   : Natural := 0;
   begin
      for Text in 1 .. Count loop
         Bytes := Bytes + Held.Excerpt (Text)'Length;
      end loop;
      return Ranked (Held, Query, Bytes);
   end Scores;

   function Ranked (Held : Memory'Class; Query : String; Bytes : Natural)
     return Score_List
   is
      use Ada.Numerics.Long_Elementary_Functions;

      Count   : constant Natural := Held.Count;
      Folds   : String (1 .. Bytes);
      --  The excerpts back to back, folded: a word's text, for comparing
      --  words whose hashes agree
      Kept    : Word_Array (1 .. Max_Postings);
      Kept_Last : Natural := 0;
      Asked   : Word_Array (1 .. Max_Query);
      Asked_Last : Natural := 0;
      Lengths : array (1 .. Count) of Natural := [others => 0];
      Total   : Natural := 0;
      Sums    : array (1 .. Count) of Long_Float := [others => 0.0];
      Result  : Score_List (1 .. Count) := [others => 0];

      Filled  : Natural := 0;

      function Spelled (Item : Word) return String is
        (if Item.Text = 0 then Query (Item.First .. Item.Last)
         else Folds (Item.First .. Item.Last));
   begin
      if Count = 0 then
         return Result;
      end if;
      for Text in 1 .. Count loop
         declare
            Excerpt : constant String := Held.Excerpt (Text);
            Before  : constant Natural := Kept_Last;
         begin
            Folds (Filled + 1 .. Filled + Excerpt'Length) := Folded (Excerpt);
            Add_Words (Folds (Filled + 1 .. Filled + Excerpt'Length), Text,
                       Kept, Kept_Last);
            Filled := Filled + Excerpt'Length;
            Lengths (Text) := Kept_Last - Before;
            Total := Total + Lengths (Text);
         end;
      end loop;
      Add_Words (Query, 0, Asked, Asked_Last);
      if Total = 0 or else Asked_Last = 0 then
         return Result;
      end if;
      Sort (Kept (1 .. Kept_Last));
      Sort (Asked (1 .. Asked_Last));

      declare
         Mean : constant Long_Float :=
           Long_Float (Total) / Long_Float (Count);
         Frequencies : array (1 .. Count) of Natural;
         Low  : Positive := 1;
         --  Kept (Low ..) holds no hash below the query word's: both lists
         --  are sorted, so the walk is one pass over each
      begin
         for Term in 1 .. Asked_Last loop
            if Term = 1 or else Asked (Term).Hash /= Asked (Term - 1).Hash
              or else Spelled (Asked (Term)) /= Spelled (Asked (Term - 1))
            then
               while Low <= Kept_Last and then Kept (Low).Hash < Asked (Term).Hash
               loop
                  Low := Low + 1;
               end loop;
               Frequencies := [others => 0];
               declare
                  At_Word : Natural := Low;
                  Holding : Natural := 0;
               begin
                  while At_Word <= Kept_Last
                    and then Kept (At_Word).Hash = Asked (Term).Hash
                  loop
                     if Spelled (Kept (At_Word)) = Spelled (Asked (Term)) then
                        if Frequencies (Kept (At_Word).Text) = 0 then
                           Holding := Holding + 1;
                        end if;
                        Frequencies (Kept (At_Word).Text) :=
                          Frequencies (Kept (At_Word).Text) + 1;
                     end if;
                     At_Word := At_Word + 1;
                  end loop;
                  if Holding > 0 then
                     declare
                        Idf : constant Long_Float :=
                          Log (1.0 + (Long_Float (Count - Holding) + 0.5)
                                     / (Long_Float (Holding) + 0.5));
                     begin
                        for Text in 1 .. Count loop
                           if Frequencies (Text) > 0 then
                              declare
                                 Tf : constant Long_Float :=
                                   Long_Float (Frequencies (Text));
                              begin
                                 Sums (Text) := Sums (Text)
                                   + Idf * Tf * (K1 + 1.0)
                                     / (Tf + K1 * (1.0 - B + B
                                          * Long_Float (Lengths (Text))
                                          / Mean));
                              end;
                           end if;
                        end loop;
                     end;
                  end if;
               end;
            end if;
         end loop;
      end;
      for Text in 1 .. Count loop
         Result (Text) := Score_Thousandths
           (Long_Float'Min (Sums (Text) * 1000.0,
                            Long_Float (Score_Thousandths'Last)));
      end loop;
      return Result;
   end Ranked;

   function Score_Image (Score : Score_Thousandths) return String is
      Whole : constant String := Natural'Image (Natural (Score / 1000));
      Part  : constant String :=
        Natural'Image (1000 + Natural (Score mod 1000));
   begin
      return Whole (Whole'First + 1 .. Whole'Last) & "."
        & Part (Part'First + 2 .. Part'Last);
   end Score_Image;

   overriding function Recall
     (Self : Organ; Held : Memory'Class; Input : String)
     return Recall_Result
   is
      pragma Unreferenced (Self);
   begin
      if not Held.Is_Readable then
         return No_Recall_Available;
      end if;
      declare
         Scored : constant Score_List := Scores (Held, Input);
         Hits   : Hit_List := No_Hits;
         Places : array (1 .. Top + 1) of Recall_Count := [others => 1];
         --  Where each hit's excerpt stands in Held
         Last   : Hit_Count := 0;
      begin
         --  Insertion into the best Top, later turns first among equals:
         --  the turns are walked newest first, and a score displaces only
         --  a lower one
         for Text in reverse Scored'Range loop
            if Scored (Text) > 0 then
               declare
                  Place : Positive := Last + 1;
               begin
                  while Place > 1
                    and then Hits (Place - 1).Score < Scored (Text)
                  loop
                     Place := Place - 1;
                  end loop;
                  if Place <= Top then
                     Last := Natural'Min (Last + 1, Top);
                     Hits (Place + 1 .. Last) := Hits (Place .. Last - 1);
                     Places (Place + 1 .. Last) := Places (Place .. Last - 1);
                     Hits (Place) :=
                       (Turn => Held.Turn_Of (Text), Score => Scored (Text));
                     Places (Place) := Text;
                  end if;
               end;
            end if;
         end loop;
         declare
            function Spelled (From : Positive) return String is
              (if From > Last then ""
               else (if From > 1 then "; " else "")
                    & "turn" & Positive'Image (Hits (From).Turn)
                    & " (score " & Score_Image (Hits (From).Score) & "): "
                    & Held.Excerpt (Places (From))
                    & Spelled (From + 1));
            Text : constant String := Spelled (1);
         begin
            return (Length => Text'Length, Status => Recalled, Hits => Hits,
                    Hit_Last => Last, Text => Text);
         end;
      end;
   end Recall;

   overriding procedure Remember
     (Self  : Organ;
      Held  : in out Memory'Class;
      Turn  : Positive;
      Input : String)
   is
      pragma Unreferenced (Self);
   begin
      Held.Keep
        (Turn,
         Input (Input'First .. Input'First - 1
                + Utf8.Prefix_Length (Input, Keep_Bytes)),
         Max_Depth);
   end Remember;

end Organs.Morag.Relevance;
