with Ada.Numerics.Long_Elementary_Functions;
with Fnv_Hash;
with Organs.Morag.Words;
with Utf8;

package body Organs.Morag.Relevance is

   use type Words.Word_Key;
   use type Words.Word_Prefix;

   K1 : constant Long_Float := 1.2;
   B  : constant Long_Float := 0.75;

   function Scores (Held : Memory'Class; Input : String) return Score_List is
      use Ada.Numerics.Long_Elementary_Functions;

      Count  : constant Natural := Held.Count;
      Query  : constant String :=
        Folded (Input (Input'First .. Input'First - 1
                       + Utf8.Prefix_Length (Input, Query_Bytes)));
      Most   : constant Positive := Words.Most_Words (Query'Length);
      Slots  : constant Positive := Words.Table_Slots (Query'Length);
      Table  : array (0 .. Slots - 1) of Natural := [others => 0];
      --  0: a free slot, else the term whose hash leads there
      Term_Key   : array (1 .. Most) of Words.Word_Key;
      Term_Prefix : array (1 .. Most) of Words.Word_Prefix;
      Term_First : array (1 .. Most) of Positive;
      Term_Last  : array (1 .. Most) of Natural;
      Terms  : Natural := 0;
      --  The query's distinct words: Query (Term_First .. Term_Last)
      Result : Score_List (1 .. Count) := [others => 0];

      --  Whether Word, folded already, is the query's Term
      function Spells (Word : String; Term : Positive) return Boolean is
        (Word = Query (Term_First (Term) .. Term_Last (Term)));

      --  Where the word of Key spelled (folded) by Spelling is in Table, or
      --  the free slot where it would go
      function Slot_Of (Key : Words.Word_Key; Spelling : String)
        return Natural
      is
         Index : Natural := Natural (Key and Words.Word_Key (Slots - 1));
      begin
         while Table (Index) /= 0
           and then (Term_Key (Table (Index)) /= Key
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
         Words.Next_Word (Query, At_Byte, First, Last, Hash, Found);
         exit when not Found;
         declare
            Key  : constant Words.Word_Key := Words.Key_Of (Hash);
            Slot : constant Natural := Slot_Of (Key, Query (First .. Last));
         begin
            if Table (Slot) = 0 then
               Terms := Terms + 1;
               Term_Key (Terms) := Key;
               Term_Prefix (Terms) := Words.Prefix_Of (Query (First .. Last));
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
         --  One pass over each kept text's word list: each distinct word
         --  looked up among the query's
         Lists   : constant String := Held.Word_Lists;
         List_At : Positive := Lists'First;
      begin
         for Text in 1 .. Count loop
            declare
               --  Every index below stays within Lists (the loop's own
               --  tests: a list cut short ends the count, it reads no byte
               --  past its frame), the query's terms and Table; the checks
               --  would cost more than this loop, most of a recall
               pragma Suppress (Index_Check);
               pragma Suppress (Range_Check);
               pragma Suppress (Overflow_Check);
               pragma Suppress (Length_Check);
               List_Last : constant Natural :=
                 Natural'Min (Lists'Last,
                              List_At + Words.Frame_Bytes - 1
                              + Words.Frame_Length (Lists, List_At));
               Length    : Natural := 0;

               --  Whether the word of Lead, the rest of whose bytes stand at
               --  Lists (Rest), is the query's Term
               function Spells
                 (Lead : Words.Entry_Lead; Rest : Positive; Term : Positive)
                 return Boolean
               is (Natural (Lead.Size)
                     = Term_Last (Term) - Term_First (Term) + 1
                   and then Lead.Prefix = Term_Prefix (Term)
                   and then
                     (Natural (Lead.Size) <= Words.Prefix_Bytes
                      or else
                        Lists (Rest .. Rest - 1 + Words.Rest_Bytes (Lead))
                        = Query (Term_First (Term) + Words.Prefix_Bytes
                                 .. Term_Last (Term))));
            begin
               At_Byte := List_At + Words.Frame_Bytes;
               while At_Byte + Words.Entry_Lead_Bytes - 1 <= List_Last loop
                  declare
                     Lead : constant Words.Entry_Lead :=
                       Words.Lead_At (Lists, At_Byte);
                     Word : constant Positive :=
                       At_Byte + Words.Entry_Lead_Bytes;
                     Index : Natural :=
                       Natural (Lead.Key and Words.Word_Key (Slots - 1));
                     Term  : Natural;
                  begin
                     exit when Word - 1 + Words.Rest_Bytes (Lead) > List_Last;
                     Length := Length + Natural (Lead.Times);
                     --  Slot_Of, by hand: this loop is most of a recall
                     loop
                        Term := Table (Index);
                        exit when Term = 0
                          or else (Term_Key (Term) = Lead.Key
                                   and then Spells (Lead, Word, Term));
                        Index := (Index + 1) mod Slots;
                     end loop;
                     if Term /= 0 then
                        Frequencies (Term, Text) :=
                          Frequencies (Term, Text) + Natural (Lead.Times);
                     end if;
                     At_Byte := Word + Words.Rest_Bytes (Lead);
                  end;
               end loop;
               Lengths (Text) := Length;
               Total := Total + Length;
               List_At := List_Last + 1;
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
            Text : String (1 .. Max_Recall_Bytes);
            Used : Natural := 0;
            --  Text (1 .. Used): within its bound by Hit_Lead_Bytes

            procedure Put (Part : String) is
            begin
               Text (Used + 1 .. Used + Part'Length) := Part;
               Used := Used + Part'Length;
            end Put;
         begin
            for From in 1 .. Last loop
               if From > 1 then
                  Put ("; ");
               end if;
               Put ("turn");
               Put (Positive'Image (Hits (From).Turn));
               Put (" (score ");
               Put (Score_Image (Hits (From).Score));
               Put ("): ");
               Put (Held.Excerpt (Places (From)));
            end loop;
            return (Length => Used, Status => Recalled, Hits => Hits,
                    Hit_Last => Last, Text => Text (1 .. Used));
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
      Held.Index_Words;
      Held.Keep
        (Turn,
         Input (Input'First .. Input'First - 1
                + Utf8.Prefix_Length (Input, Keep_Bytes)),
         Max_Depth);
   end Remember;

end Organs.Morag.Relevance;
