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

   type Excerpt_Length is range 0 .. Excerpt_Size'Last with Size => 16;
   type Excerpt_Lengths is array (Recall_Count) of Excerpt_Length
   with Component_Size => 16;

   --  One text holds the kept excerpts back to back, oldest first: a
   --  session costs one string and 32 bytes of lengths, not sixteen
   --  strings, which is what lets 100,000 sessions fit in 64 MB.
   type Memory is record
      Kept  : Unbounded_String;
      Sizes : Excerpt_Lengths := [others => 0];
      Count : Natural range 0 .. Recall_Count'Last := 0;
   end record;

end Organs.Morag;
