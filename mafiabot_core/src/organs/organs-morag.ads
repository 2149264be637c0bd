--  F1, MoRAG: context recalled for the descent.
--
--  Contract: recall draws only on the same session's earlier turns (law L1:
--  a memory is kept in the session's own record, and nothing else is
--  searched); what is kept per session is bounded by the fixture's
--  recall_depth and excerpt_bytes.

package Organs.Morag is

   type Memory is private;

   function Recall (Self : Memory; Input : String) return String;
   --  An excerpt of the most recent earlier turn sharing a word of three or
   --  more letters with Input, else of the most recent turn, else ""

   procedure Remember (Self : in out Memory; Stub : Fixture; Input : String);
   --  Keep an excerpt of Input, forgetting the oldest beyond recall_depth

   function Excerpt (Stub : Fixture; Input : String) return String;
   --  The first excerpt_bytes of Input, never cutting a character

private

   type Excerpts is array (Recall_Count) of Unbounded_String;

   type Memory is record
      Kept  : Excerpts;
      Count : Natural range 0 .. Recall_Count'Last := 0;
      Next  : Recall_Count := 1;
      --  Where the next excerpt goes: Kept is a ring
      Depth : Recall_Count := 1;
   end record;

end Organs.Morag;
