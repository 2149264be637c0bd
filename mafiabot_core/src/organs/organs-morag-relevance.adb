with Ada.Numerics.Long_Elementary_Functions;
with Fnv_Hash;
with Organs.Word_Search;
with Utf8;

package body Organs.Morag.Relevance is

   use type Fnv_Hash.Hash;

   K1 : constant Long_Float := 1.2;
   B  : constant Long_Float := 0.75;

   Min_Word : constant := Organs.Word_Search.Min_Word_Bytes;

   Max_Query : constant := Query_Bytes / (Min_Word + 1) + 1;
   --  A word takes Min_Word bytes and a byte that ends it

   Slots : constant := 1024;
   --  The query's words by hash, open addressing: a power of two, at
   --  least twice Max_Query, so a probe ends soon at a free slot

   pragma Compile_Time_Error
     (Slots < 2 * Max_Query, "the query's table stays at most half full");

   Not_A_Word : constant Character := ASCII.NUL;

   Word_Fold : constant array (Character) of Character :=
     [for C in Character =>
        (if Is_Word_Byte (C) then Folded (C) else Not_A_Word)];
   --  A byte as a word holds it (Folded), or Not_A_Word: one look-up for
   --  every byte of the memory, which each turn reads

   --  The next word of Text at or after Index: Text (First .. Last) and
   --  the hash of its folded bytes; Found is False past the last
   procedure Next_Word
     (Text  : String;
      Index : in out Positive;
      First : out Positive;
      Last  : out Natural;
      Hash  : out Fnv_Hash.Hash;
      Found : out Boolean) is
   begin
      Found := False;
      First := Index;
      Last := 0;
      Hash := Fnv_Hash.Basis;
      while Index <= Text'Last loop
         if Word_Fold (Text (Index)) /= Not_A_Word then
            First := Index;
            Hash := Fnv_Hash.Basis;
            while Index <= Text'Last
              and then Word_Fold (Text (Index)) /= Not_A_Word
            loop
               Hash := Fnv_Hash.Step (Hash, Word_Fold (Text (Index)));
               Index := Index + 1;
            end loop;
            if Index - First >= Min_Word then
               Last := Index - 1;
               Found := True;
               return;
            end if;
         else
            Index := Index + 1;
         end if;
      end loop;
   end Next_Word;

   function Scores (Held : Memory'Class; Input : String) return Score_List is
      use Ada.Numerics.Long_Elementary_Functions;

      Count  : constant Natural := Held.Count;
      Query  : constant String :=
        Folded (Input (Input'First .. Input'First - 1
                       + Utf8.Prefix_Length (Input, Query_Bytes)));
      Table  : array (0 .. Slots - 1) of Natural := [others => 0];
      --  0: a free slot, else the term whose hash leads there
      Term_Hash  : array (1 .. Max_Query) of Fnv_Hash.Hash;
      Term_First : array (1 .. Max_Query) of Positive;
      Term_Last  : array (1 .. Max_Query) of Natural;
      Terms  : Natural := 0;
      --  The query's distinct words: Query (Term_First .. Term_Last)
      Result : Score_List (1 .. Count) := [others => 0];

      --  Whether Word, folded, is the query's Term
      function Spells (Word : String; Term : Positive) return Boolean is
        (Word'Length = Term_Last (Term) - Term_First (Term) + 1
         and then (for all Offset in 0 .. Word'Length - 1 =>
                     Folded (Word (Word'First + Offset))
                     = Query (Term_First (Term) + Offset)));

      --  Where the word of Hash spelled by Spelling is in Table, or the
      --  free slot where it would go
      function Slot_Of (Hash : Fnv_Hash.Hash; Spelling : String)
        return Natural
      is
         Index : Natural := Natural (Hash and (Slots - 1));
      begin
         while Table (Index) /= 0
           and then (Term_Hash (Table (Index)) /= Hash
                     or else not Spells (Spelling, Table (Index)))
         loop
            Index := (Index + 1) mod Slots;
         end loop;
         return Index;
      end Slot_Of;

      At_Byte : Positive := Query'First;
      First   : Positive;
      Last    : Natural;
      Hash    : Fnv_Hash.Hash;
      Found   : Boolean;
   begin
      if Count = 0 then
         return Result;
      end if;
      loop
         Next_Word (Query, At_Byte, First, Last, Hash, Found);
         exit when not Found;
         declare
            Slot : constant Natural := Slot_Of (Hash, Query (First .. Last));
         begin
            if Table (Slot) = 0 then
               Terms := Terms + 1;
               Term_Hash (Terms) := Hash;
               Term_First (Terms) := First;
               Term_Last (Terms) := Last;
               Table (Slot) := Terms;
            end if;
         end;
      end loop;
      if Terms = 0 then
         return Result;
      end if;

      declare
         Frequencies : array (1 .. Terms, 1 .. Count) of Natural :=
           [others => [others => 0]];
         Lengths : array (1 .. Count) of Natural := [others => 0];
         Total   : Natural := 0;
         Sums    : array (1 .. Count) of Long_Float := [others => 0.0];
      begin
         --  One pass over each kept text: each word looked up among the
         --  query's
         for Text in 1 .. Count loop
            declare
               Excerpt : constant String := Held.Excerpt (Text);
            begin
               At_Byte := Excerpt'First;
               loop
                  Next_Word (Excerpt, At_Byte, First, Last, Hash, Found);
                  exit when not Found;
                  Lengths (Text) := Lengths (Text) + 1;
                  declare
                     Term : constant Natural :=
                       Table (Slot_Of (Hash, Excerpt (First .. Last)));
                  begin
                     if Term /= 0 then
                        Frequencies (Term, Text) := Frequencies (Term, Text) + 1;
                     end if;
                  end;
               end loop;
               Total := Total + Lengths (Text);
            end;
         end loop;
         if Total = 0 then
            return Result;
         end if;

         declare
            Mean : constant Long_Float :=
              Long_Float (Total) / Long_Float (Count);
         begin
            for Term in 1 .. Terms loop
               declare
                  Holding : Natural := 0;
               begin
                  for Text in 1 .. Count loop
                     if Frequencies (Term, Text) > 0 then
                        Holding := Holding + 1;
                     end if;
                  end loop;
                  if Holding > 0 then
                     declare
                        Idf : constant Long_Float :=
                          Log (1.0 + (Long_Float (Count - Holding) + 0.5)
                                     / (Long_Float (Holding) + 0.5));
                     begin
                        for Text in 1 .. Count loop
                           if Frequencies (Term, Text) > 0 then
                              declare
                                 Tf : constant Long_Float :=
                                   Long_Float (Frequencies (Term, Text));
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
            end loop;
         end;
         for Text in 1 .. Count loop
            Result (Text) := Score_Thousandths
              (Long_Float'Min (Sums (Text) * 1000.0,
                               Long_Float (Score_Thousandths'Last)));
         end loop;
      end;
      return Result;
   end Scores;

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
