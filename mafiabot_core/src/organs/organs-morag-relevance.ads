--  F1 by relevance (--recall relevance): a MoRAG that recalls the earlier
--  turns of the session most relevant to the input, not the latest.
--
--  It keeps the first Keep_Bytes of every turn's input (never cutting a
--  character), the latest Max_Depth turns, in the memory the session's
--  repository lends (Organs.Morag.Memory: the same ranking whichever
--  repository keeps it, the body's table or the store's record).  A recall
--  ranks every kept turn against the words of the input's first
--  Query_Bytes by Okapi BM25 (Robertson et al.), k1 = 1.2, b = 0.75, with
--  the IDF that stays positive, ln (1 + (N - n + 0.5) / (n + 0.5)), all of
--  it computed over this session's kept turns alone: N is how many it
--  keeps, n how many of them hold the word, the mean length theirs.  No
--  other session's words weigh on the order (L1), which is why the store's
--  SQLite FTS5, whose bm25() counts over every row of its table, is not
--  used (docs/recall.md shows the difference).
--
--  Words are those of Organs.Word_Search (maximal runs of Is_Word_Byte
--  bytes, Min_Word_Bytes or more, ASCII folded).  A recall names at most
--  Top turns, those of a positive score, best first (a tie: the later
--  turn), each as "turn T (score S): excerpt", joined by "; ": within
--  Max_Recall_Bytes by construction.  A recall reads the memory's word
--  lists (Organs.Morag.Words), which it asks the memory to keep, not its
--  texts: time linear in the lists and the query, whatever the input's
--  length.

package Organs.Morag.Relevance is

   Keep_Bytes  : constant := 256;
   Query_Bytes : constant := 1024;
   Top         : constant := 3;

   pragma Compile_Time_Error
     (Top > Max_Hits, "a recall names every turn it draws on");

   Next_Hit     : constant String := "; ";
   Turn_Lead    : constant String := "turn ";
   Score_Lead   : constant String := " (score ";
   Excerpt_Lead : constant String := "): ";
   --  A recall's text: Turn_Lead, the turn, Score_Lead, the score,
   --  Excerpt_Lead and the excerpt, for each hit, Next_Hit between them

   Hit_Lead_Bytes : constant :=
     Next_Hit'Length + Turn_Lead'Length + Max_Decimal_Bytes
     + Score_Lead'Length + Max_Score_Bytes + Excerpt_Lead'Length;
   --  What a hit's text holds besides its excerpt, at most

   pragma Compile_Time_Error
     (Top * (Keep_Bytes + Hit_Lead_Bytes) > Max_Recall_Bytes,
      "a recall of Top turns fits its bound");

   type Organ is new Morag.Organ with null record;

   overriding function Recall
     (Self : Organ; Held : Memory'Class; Input : String)
     return Recall_Result;
   --  Held's Top turns of the best positive scores against Input, with
   --  their turns and scores in Hits; "" and no hits when none scores

   overriding procedure Remember
     (Self  : Organ;
      Held  : in out Memory'Class;
      Turn  : Positive;
      Input : String);
   --  Keep Input's first Keep_Bytes as turn Turn's, Max_Depth deep

   type Score_List is array (Recall_Count range <>) of Score_Thousandths;

   function Scores (Held : Memory'Class; Input : String) return Score_List
   with Post => Scores'Result'First = 1
                and then Scores'Result'Last = Held.Count;
   --  Every kept excerpt's BM25 score against Input, in thousandths
   --  (rounded), oldest first: what Recall ranks

end Organs.Morag.Relevance;
