--  C2, cognition: the reasoning step of each pass, the names of the moves
--  the synthesis lists (step 22), and the coherence check (step 23).
--
--  Contract any cognition honours: Reason's thought depends only on its
--  arguments (the pass, the turn's focus and the pass's draw: nothing of
--  another session, L1) and is written into a part bounded by
--  Max_Thought_Bytes (the store cuts a longer one, visibly); move names are
--  UTF-8 of 1 .. Max_Name_Bytes bytes.  A pass's thought costs time linear
--  in its arguments and within the turn's budget (25 us of CPU for a whole
--  8-pass turn): an organ that needs a model must answer within it or be
--  given a budget of its own.
--
--  Cohere is no organ's to choose (law L4): it is the one drift detector,
--  the same whatever cognition runs, and its result is reported and never
--  given to any organ.

with Organs.Texts;

package Organs.Cognition is

   Max_Thought_Bytes : constant := 1024;

   type Organ is limited interface;

   function Move_Name (Self : Organ; Way : Direction; Rank : Quarter)
     return Name_Text is abstract;
   --  The name of a pass's move (abstract, ..., commit)

   procedure Reason
     (Self    : Organ;
      Way     : Direction;
      Rank    : Quarter;
      Focus   : String;
      Draw    : Organs.Texts.Part;
      Thought : in out Organs.Texts.Store) is abstract
   with Pre'Class => Organs.Texts.Is_Writing (Thought)
                     and then Organs.Texts.Is_Kept (Thought, Draw);
   --  Add one pass's thought to the part being written into Thought, the
   --  pass's draw being a text kept in Thought before (read it with
   --  Organs.Texts.Text_Of, or quote it with Add_Kept)

   type Coherence is record
      Score : Fraction;
      --  How much of the output's vocabulary the final cognition shares
      Drift : Fraction;
      --  1 - Score
   end record;

   function Cohere (Output, Final_Cognition : String) return Coherence
   with Post => To_Millis (Cohere'Result.Score) + To_Millis (Cohere'Result.Drift)
                = Energy_Gate.Full;
   --  Word-set overlap (Jaccard) of the two texts

end Organs.Cognition;
