--  F1, MoRAG: context recalled for the descent.
--
--  Contract any MoRAG honours: recall draws on the same session's earlier
--  turns only, kept in that session's Memory, which the session's
--  repository lends its turn and nothing else searches (L1); what a memory
--  keeps is bounded (Max_Depth excerpts of at most Max_Recall_Bytes each)
--  and so is what a recall gives (the cycle cuts a longer one, visibly);
--  recall and remember are deterministic and cost time linear in the
--  input and the memory.
--
--  The seam has two sides.  Memory is the session's store of excerpts, an
--  interface whose representation belongs to whoever implements it (the
--  packed excerpts of Organs.Morag.Excerpts, kept in the body's session
--  table or in the store's record; a memory over a database of its own
--  implements the same operations); the Organ is the policy of what to
--  keep and what to recall, and reaches a memory only through these
--  operations.  Organs hold no state between calls (Organs.Sets): what a
--  memory organ needs besides its policy is the memory it is lent.

--  Checked in every build, the unchecked one too: the bodies suppress
--  index checks on the strength of these preconditions
pragma Assertion_Policy (Pre => Check);

package Organs.Morag is

   Max_Recall_Bytes : constant := 1024;
   Max_Depth        : constant := 16;

   subtype Recall_Count is Positive range 1 .. Max_Depth;

   type Memory is limited interface;
   --  One session's kept excerpts, oldest first, each of one earlier turn
   --  of the session (its number is Turn_Of): what the session's
   --  repository lends the turn, and only that session's turn

   function Count (Held : Memory) return Natural is abstract
   with Post'Class => Count'Result <= Max_Depth;
   --  How many excerpts Held keeps

   function Excerpt (Held : Memory; Index : Recall_Count) return String
   is abstract
   with Pre'Class  => Index <= Count (Held),
        Post'Class => Is_Within (Excerpt'Result, Max_Recall_Bytes);
   --  The Index-th excerpt Held keeps, oldest first

   procedure Read_Excerpt
     (Held    : Memory;
      Index   : Recall_Count;
      Process : not null access procedure (Excerpt : String)) is abstract
   with Pre'Class => Index <= Count (Held);
   --  Process (Held.Excerpt (Index)), the excerpt given where Held keeps it
   --  when it can, not copied: for a reader that copies it on (Process
   --  must neither read nor change Held otherwise)

   function Turn_Of (Held : Memory; Index : Recall_Count) return Positive
   is abstract
   with Pre'Class => Index <= Count (Held);
   --  The turn of the session whose excerpt is the Index-th; increasing
   --  with Index

   function Is_Readable (Held : Memory) return Boolean is abstract;
   --  False when the memory could not be read (one kept outside the
   --  session's record, whose store failed): it then keeps nothing

   procedure Keep
     (Held    : in out Memory;
      Turn    : Positive;
      Excerpt : String;
      Depth   : Recall_Count) is abstract
   with Pre'Class  => Is_Within (Excerpt, Max_Recall_Bytes)
                      and then (Count (Held) = 0
                                or else Turn > Turn_Of (Held, Count (Held))),
        Post'Class => (if Is_Readable (Held)
                       then Count (Held) in 1 .. Depth
                            and then Turn_Of (Held, Count (Held)) = Turn);
   --  Keep Excerpt, of the session's turn Turn, as the most recent,
   --  forgetting the oldest beyond Depth (a memory that cannot be read
   --  keeps nothing)

   function Word_Index (Held : Memory) return String is abstract;
   --  The inverted index of the words of every excerpt, as
   --  Organs.Morag.Words builds it (Added, oldest excerpt first): what a
   --  ranking reads instead of the texts

   procedure Read_Word_Index
     (Held    : Memory;
      Process : not null access procedure (Index : String)) is abstract;
   --  Process (Held.Word_Index), in place as Read_Excerpt gives an excerpt

   procedure Index_Words (Held : in out Memory) is abstract
   with Post'Class => Count (Held) = Count (Held)'Old;
   --  Keep the Word_Index of the excerpts Held keeps now or later, so that
   --  Word_Index reads it instead of building it from the texts: what an
   --  organ that ranks asks of its memory (an organ that never ranks
   --  leaves a memory without an index, and costs nothing for it)

   type Recall_Status is
     (Recalled,
      --  Text is what the memory gives for the input ("" for nothing)
      Unavailable);
      --  The memory could not be read (Is_Readable is False): the turn
      --  goes on without a recall, and its trace says so

   Max_Hits : constant := 4;
   --  The most earlier turns one recall names

   type Score_Thousandths is range 0 .. 1_000_000_000;
   --  How relevant a recalled turn is to the input, in thousandths of the
   --  organ's own score (comparable within one recall only)

   type Hit is record
      Turn  : Positive := 1;
      Score : Score_Thousandths := 0;
   end record;
   --  An earlier turn a recall drew on, and why: its score

   Max_Decimal_Bytes : constant := 10;
   --  Natural'Last in decimal
   Max_Score_Bytes   : constant := 11;
   --  Score_Thousandths'Last as Put_Score writes it: 1000000.000

   procedure Put_Decimal (Text : in out String; Last : in out Natural;
                          Value : Natural)
   with Pre  => Last in Text'First - 1 .. Text'Last - Max_Decimal_Bytes,
        Post => Last in Last'Old + 1 .. Last'Old + Max_Decimal_Bytes;
   --  Value's decimal digits at Text (Last + 1 ..), Last moved past them

   procedure Put_Score (Text : in out String; Last : in out Natural;
                        Score : Score_Thousandths)
   with Pre  => Last in Text'First - 1 .. Text'Last - Max_Score_Bytes,
        Post => Last in Last'Old + 5 .. Last'Old + Max_Score_Bytes;
   --  Score as a recall says it, its whole part, a point and three digits
   --  (1.204, 0.310), at Text (Last + 1 ..), Last moved past it: the one
   --  form of a score in a recall's text and in a result's recall member

   subtype Hit_Count is Natural range 0 .. Max_Hits;
   type Hit_List is array (1 .. Max_Hits) of Hit;

   type Recall_Result (Length : Natural) is record
      Status   : Recall_Status := Recalled;
      Hits     : Hit_List;
      Hit_Last : Hit_Count := 0;
      --  Hits (1 .. Hit_Last): the turns Text was drawn from, best first
      --  (none for an organ that does not rank)
      Text     : String (1 .. Length);
   end record;

   No_Hits : constant Hit_List := [others => (Turn => 1, Score => 0)];

   function Recall_Of (Text : String) return Recall_Result is
     ((Length => Text'Length, Status => Recalled, Hits => No_Hits,
       Hit_Last => 0, Text => Text));

   No_Recall_Available : constant Recall_Result :=
     (Length => 0, Status => Unavailable, Hits => No_Hits, Hit_Last => 0,
      Text => "");

   function Names_Kept_Turns
     (Given : Recall_Result; Held : Memory'Class) return Boolean is
     (for all Index in 1 .. Given.Hit_Last =>
        (for some Kept in reverse 1 .. Held.Count =>
           Held.Turn_Of (Kept) = Given.Hits (Index).Turn));
   --  Every turn Given names is one Held keeps (searched newest first: a
   --  recall names recent turns more often than old ones, and the check
   --  runs on every recall of the shipped build)

   type Organ is limited interface;

   function Recall
     (Self : Organ; Held : Memory'Class; Input : String)
     return Recall_Result is abstract
   with Post'Class => Is_Within (Recall'Result.Text, Max_Recall_Bytes)
                      and then (Recall'Result.Status = Recalled
                                or else Recall'Result.Length = 0)
                      and then Names_Kept_Turns (Recall'Result, Held);
   --  What the session's memory gives for Input ("" for nothing), or why
   --  it gives nothing: a recall may fail, and the turn goes on.  Every
   --  turn it names is one Held keeps.

   procedure Remember
     (Self  : Organ;
      Held  : in out Memory'Class;
      Turn  : Positive;
      Input : String) is abstract;
   --  Keep what the session's turn Turn, of Input, leaves for its next
   --  turns

   function Latest_Sharing (Held : Memory'Class; Input : String) return String
   with Post => Is_Within (Latest_Sharing'Result, Max_Recall_Bytes);
   --  The most recent excerpt sharing a word of Word_Search.Min_Word_Bytes
   --  or more bytes with Input (bytes compared with ASCII folding), else the
   --  most recent, else ""

end Organs.Morag;
