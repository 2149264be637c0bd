--  The word comparisons of the organs that hold a turn's input against
--  texts (F1's recall against the session's memory, C3's rules), at a cost linear in
--  the input and in the texts whatever either holds: the input is bounded
--  only by the line cap (4 MiB), so nothing may compare it against a text
--  once per word of it.
--
--  Contract: each answer is the one its definition (stated under each
--  function) gives; only how it is found depends on the sizes.  Recall is
--  first searched directly (each word of the input at each position of a
--  text, latest text first), which nearly always ends at once, but only
--  with as much work as indexing the texts would cost; past that the input
--  is walked once, a word at a time, through a suffix automaton of the
--  texts (Blumer et al., 1985), built in time linear in the texts.  The
--  rules' words are searched directly in a short text and otherwise by
--  Knuth-Morris-Pratt or one Aho-Corasick pass.  Plain Strings in, plain
--  numbers out: nothing here knows what the texts mean.

package Organs.Word_Search is

   Min_Word_Bytes : constant := 3;
   --  Shorter words ("a", "of") are shared by too many texts to mean
   --  anything

   Max_Texts : constant := 32;
   --  How many texts one search tells apart (one bit each)

   Max_Text_Bytes : constant := 2 ** 22;
   --  The most bytes of texts one search indexes (MoRAG keeps at most
   --  16 x 1,024): the index numbers an edge by its state and byte in 32
   --  bits, and has at most 2 states a byte

   type Text_Ends is array (Positive range <>) of Natural;
   --  Where each of several texts kept back to back ends, oldest first:
   --  text K is Texts (Ends (K - 1) + 1 .. Ends (K)), the first starting
   --  at Texts'First

   function Are_Ends_Of (Texts : String; Ends : Text_Ends) return Boolean is
     (Ends'First = 1
      and then Ends'Last <= Max_Texts
      and then Texts'Last - Texts'First < Max_Text_Bytes - Ends'Last
      and then (for all K in Ends'Range =>
                  Ends (K) <= Texts'Last
                  and then (if K = 1 then Ends (K) >= Texts'First - 1
                            else Ends (K) >= Ends (K - 1))));
   --  Ends cuts Texts into at most Max_Texts consecutive texts, some
   --  possibly empty

   function Latest_Sharing
     (Texts : String; Ends : Text_Ends; Input : String) return Natural
   with
     Pre  => Are_Ends_Of (Texts, Ends),
     Post => Latest_Sharing'Result <= Ends'Last;
   --  The last K such that some word of Input of Min_Word_Bytes or more
   --  (a maximal run of Is_Word_Byte bytes) occurs in text K, anywhere,
   --  compared with ASCII folding (Folded); 0 if there is none

   function Occurs_Folded (Word, Text : String) return Boolean;
   --  Whether Word stands anywhere in Text, Text's bytes folded (Folded)
   --  and Word's compared as they are (a caller folds its words once: the
   --  stub intender's are folded when its fixture is loaded).
   --  Knuth-Morris-Pratt: at most 2 x Text'Length comparisons and
   --  Word'Length words of memory, whatever either holds.

   type Word_Text is not null access constant String;
   --  A word searched for, read where its owner keeps it

   type Word_List is array (Positive range <>) of Word_Text;
   type Word_Flags is array (Positive range <>) of Boolean;

   procedure Find_Folded
     (Words : Word_List; Text : String; Found : out Word_Flags)
   with Pre => Found'First = Words'First and then Found'Last = Words'Last;
   --  Found (K) = Occurs_Folded (Words (K).all, Text) for every K, in one
   --  pass over Text for all the words (Aho-Corasick, an automaton over
   --  the bytes the words use) once Text is long enough for building it to
   --  pay, else a pass a word.  Not a postcondition: checking it would
   --  search again, word by word, what the single pass is there to spare.

end Organs.Word_Search;
