with Ada.Numerics.Long_Elementary_Functions;
with Organs.Morag.Words;
with Utf8;

package body Organs.Morag.Relevance is

   K1 : constant Long_Float := 1.2;
   B  : constant Long_Float := 0.75;

   subtype Texts_Count is Natural range 0 .. Max_Depth;

   type Idf_Table is array (Recall_Count, Recall_Count) of Long_Float;

   --  The IDF of a word that Holding of the session's Count kept turns
   --  hold, for every Count and Holding: all that it depends on
   function Idf_Of_Counts return Idf_Table is
      use Ada.Numerics.Long_Elementary_Functions;
   begin
      return Table : Idf_Table := [others => [others => 0.0]] do
         for Count in Recall_Count loop
            for Holding in 1 .. Count loop
               Table (Count, Holding) :=
                 Log (1.0 + (Long_Float (Count - Holding) + 0.5)
                            / (Long_Float (Holding) + 0.5));
            end loop;
         end loop;
      end return;
   end Idf_Of_Counts;

   Idf : constant Idf_Table := Idf_Of_Counts;

   Later_Turn_Lead : constant String := Next_Hit & Turn_Lead;

   function Scores (Held : Memory'Class; Input : String) return Score_List is
      Count  : constant Texts_Count := Held.Count;
      Query  : String renames
        Input (Input'First .. Input'First - 1
               + (if Input'Length <= Query_Bytes then Input'Length
                  else Utf8.Prefix_Length (Input, Query_Bytes)));
      --  An input that fits is its own query (nothing to cut, and nearly
      --  every turn's input fits): the scan for a character's end is for
      --  a longer one
      Asked  : Words.Word_Set
        (Words.Most_Words (Query'Length), Words.Table_Slots (Query'Length));
      Result : Score_List (1 .. Count) := [others => 0];

      --  Result from the words of Index, the memory's word index
      procedure Rank (Index : String) is
         Total    : Natural := 0;
         Holding  : array (1 .. Words.Distinct (Asked)) of Texts_Count :=
           [others => 0];
         Postings : array (1 .. Words.Distinct (Asked)) of Positive;
         --  For each of the query's words the session holds: in how many
         --  kept turns, and where in Index their postings stand
         At_Byte  : Positive := Words.First_Term (Index);
         Lengths  : array (1 .. Count) of Natural;
         --  Each kept turn's count of words, read once for the mean and
         --  for its own length's norm
      begin
         for Text in 1 .. Count loop
            Lengths (Text) := Words.Word_Count (Index, Text);
            Total := Total + Lengths (Text);
         end loop;
         if Total = 0 then
            return;
         end if;
         --  Each of the session's distinct words once, looked up among
         --  the query's
         while At_Byte <= Index'Last loop
            declare
               Lead : constant Words.Term_Lead :=
                 Words.Lead_At (Index, At_Byte);
               Term : constant Natural :=
                 Words.Find (Asked, Query, Index, At_Byte, Lead);
            begin
               if Term /= 0 then
                  Holding (Term) := Natural (Lead.Postings);
                  Postings (Term) := Words.Postings_At (At_Byte, Lead);
               end if;
               At_Byte := Words.Next_Term (At_Byte, Lead);
            end;
         end loop;

         declare
            Mean : constant Long_Float :=
              Long_Float (Total) / Long_Float (Count);
            Norm : array (1 .. Count) of Long_Float;
            Sums : array (1 .. Count) of Long_Float := [others => 0.0];
            --  Every turn's sum over the query's words in the query's
            --  order, as BM25 adds them
         begin
            for Text in 1 .. Count loop
               Norm (Text) :=
                 K1 * (1.0 - B + B * Long_Float (Lengths (Text)) / Mean);
            end loop;
            for Term in Holding'Range loop
               if Holding (Term) > 0 then
                  declare
                     Weight     : constant Long_Float :=
                       Idf (Count, Holding (Term));
                     At_Posting : Positive := Postings (Term);
                  begin
                     for Posting in 1 .. Holding (Term) loop
                        declare
                           Text : constant Recall_Count :=
                             Count - Words.Age_At (Index, At_Posting);
                           Tf   : constant Long_Float :=
                             Long_Float (Words.Times_At (Index, At_Posting));
                        begin
                           Sums (Text) := Sums (Text)
                             + Weight * Tf * (K1 + 1.0) / (Tf + Norm (Text));
                        end;
                        At_Posting := At_Posting + Words.Posting_Bytes;
                     end loop;
                  end;
               end if;
            end loop;
            for Text in 1 .. Count loop
               Result (Text) := Score_Thousandths
                 (Long_Float'Min (Sums (Text) * 1000.0,
                                  Long_Float (Score_Thousandths'Last)));
            end loop;
         end;
      end Rank;

   begin
      if Count = 0 then
         return Result;
      end if;
      Words.Collect (Query, Asked);
      if Words.Distinct (Asked) = 0 then
         return Result;
      end if;
      Held.Read_Word_Index (Rank'Access);
      return Result;
   end Scores;

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

            procedure Put (Part : String) with Inline is
            begin
               Text (Used + 1 .. Used + Part'Length) := Part;
               Used := Used + Part'Length;
            end Put;

            --  Remember keeps Keep_Bytes, which Hit_Lead_Bytes' bound
            --  counts on; a record another organ, or an operator's hand,
            --  wrote may hold up to Max_Recall_Bytes
            procedure Put_Excerpt (Excerpt : String) is
            begin
               if Excerpt'Length <= Keep_Bytes then
                  Put (Excerpt);
               else
                  Put (Excerpt (Excerpt'First .. Excerpt'First - 1
                                + Utf8.Prefix_Length (Excerpt, Keep_Bytes)));
               end if;
            end Put_Excerpt;

         begin
            for From in 1 .. Last loop
               Put ((if From > 1 then Later_Turn_Lead else Turn_Lead));
               Put_Decimal (Text, Used, Hits (From).Turn);
               Put (Score_Lead);
               Put_Score (Text, Used, Hits (From).Score);
               Put (Excerpt_Lead);
               Held.Read_Excerpt (Places (From), Put_Excerpt'Access);
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
