--  F1, MoRAG: context recalled for the descent.
--
--  Contract any MoRAG honours: recall draws on the same session's earlier
--  turns only, kept in that session's Memory, which the session's record
--  holds and nothing else searches (L1); what a memory keeps is bounded
--  (Max_Depth excerpts of at most Max_Recall_Bytes each) and so is what a
--  recall gives (the cycle cuts a longer one, visibly); recall and remember
--  are deterministic and cost time linear in the input and the memory.
--
--  Memory is the one way a session keeps what it said: its operations
--  (Keep, Latest_Sharing) are offered to every implementation, which
--  decides what to keep and how to recall it.

private with Ada.Strings.Unbounded;

package Organs.Morag is

   Max_Recall_Bytes : constant := 1024;
   Max_Depth        : constant := 16;

   subtype Recall_Count is Positive range 1 .. Max_Depth;

   type Memory is private;
   --  A session's kept excerpts, oldest first; empty by default

   type Recall_Status is
     (Recalled,
      --  Text is what the memory gives for the input ("" for nothing)
      Unavailable);
      --  The memory could not be read (one kept outside the session's
      --  record, whose store failed): the turn goes on without a recall,
      --  and its trace says so

   type Recall_Result (Length : Natural) is record
      Status : Recall_Status := Recalled;
      Text   : String (1 .. Length);
   end record;

   function Recall_Of (Text : String) return Recall_Result is
     ((Length => Text'Length, Status => Recalled, Text => Text));

   No_Recall_Available : constant Recall_Result :=
     (Length => 0, Status => Unavailable, Text => "");

   type Organ is limited interface;

   function Recall (Self : Organ; Held : Memory; Input : String)
     return Recall_Result is abstract
   with Post'Class => Is_Within (Recall'Result.Text, Max_Recall_Bytes)
                      and then (Recall'Result.Status = Recalled
                                or else Recall'Result.Length = 0);
   --  What the session's memory gives for Input ("" for nothing), or why
   --  it gives nothing: a recall may fail, and the turn goes on

   procedure Remember (Self : Organ; Held : in out Memory; Input : String)
   is abstract;
   --  Keep what the turn of Input leaves for the session's next turns

   function Count (Held : Memory) return Natural;
   --  How many excerpts Held keeps

   function Latest_Sharing (Held : Memory; Input : String) return String
   with Post => Is_Within (Latest_Sharing'Result, Max_Recall_Bytes);
   --  The most recent excerpt sharing a word of three or more bytes with
   --  Input (bytes compared with ASCII folding), else the most recent, else
   --  ""

   procedure Keep
     (Held : in out Memory; Excerpt : String; Depth : Recall_Count)
   with Pre  => Is_Within (Excerpt, Max_Recall_Bytes),
        Post => Count (Held) <= Depth;
   --  Keep Excerpt as the most recent, forgetting the oldest beyond Depth

   function Kept_Excerpt (Held : Memory; Index : Recall_Count) return String
   with Pre  => Index <= Count (Held),
        Post => Is_Within (Kept_Excerpt'Result, Max_Recall_Bytes);
   --  The Index-th excerpt Held keeps, oldest first.  Keeping each of them
   --  in turn into an empty memory (at Max_Depth) makes the same memory:
   --  what lets a session's record be stored outside the body.

private

   type Excerpt_Length is range 0 .. Max_Recall_Bytes with Size => 16;
   type Excerpt_Lengths is array (Recall_Count) of Excerpt_Length
   with Component_Size => 16;

   --  One text holds the kept excerpts back to back, oldest first: a
   --  session costs one string and 32 bytes of lengths, not sixteen
   --  strings, which is what lets 100,000 sessions fit in 64 MB.
   type Memory is record
      Kept  : Ada.Strings.Unbounded.Unbounded_String;
      Sizes : Excerpt_Lengths := [others => 0];
      Count : Natural range 0 .. Recall_Count'Last := 0;
   end record;

   function Count (Held : Memory) return Natural is (Held.Count);

end Organs.Morag;
