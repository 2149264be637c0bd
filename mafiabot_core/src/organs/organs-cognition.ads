--  C2, cognition: the reasoning step of each pass, the names of the moves
--  the synthesis lists (step 22), the synthesis itself when the organ has
--  one of its own, and the coherence check (step 23).
--
--  Contract any cognition honours: Reason's thought depends only on its
--  arguments -- the pass (its move, its draw, the previous pass's thought),
--  the turn's input and focus, this session's recall, and what the model
--  port answers -- and never on another session (L1) nor on coherence
--  (L4: no argument carries it); it is written into a part bounded by
--  Max_Thought_Bytes (the store cuts a longer one, visibly); move names are
--  UTF-8 of 1 .. Max_Name_Bytes bytes.  An organ that asks no model (the
--  stub) costs time linear in its arguments.  An organ that asks a model
--  spends the model's time, not the body's: each question is bounded by
--  the organ's own timeout and the port's turn deadline, and the body's
--  own work around a question stays linear in what it quotes.  Routing is
--  never a cognition's (L2), nor is the order or the number of the passes
--  (L3: the cycle asks once per pass the energy gate let run, and once for
--  the synthesis).
--
--  Every Reason and Synthesize says in its Call whether a model was asked
--  and what came of it; a pass whose question failed still ends with a
--  thought (saying so), and the turn goes on.
--
--  Cohere is no organ's to choose (law L4): it is the one drift detector,
--  the same whatever cognition runs, and its result is reported and never
--  given to any organ.

with Energy_Gate;
with Organs.Model_Port;
with Organs.Texts;

package Organs.Cognition is

   Max_Thought_Bytes : constant := 1024;

   type Organ is limited interface;

   function Move_Name (Self : Organ; Way : Direction; Rank : Quarter)
     return String is abstract;
   --  The name of a pass's move (abstract, ..., commit), a value: the
   --  cycle quotes it at most Max_Name_Bytes long

   type Pass_Facts is record
      Pass     : Energy_Gate.Pass_Index;
      Way      : Direction;
      Rank     : Quarter;
      Draw     : Organs.Texts.Part;
      --  The pass's draw (card, orientation, cross position)
      Recall   : Organs.Texts.Part;
      --  What this session's memory recalled for the turn; empty for none
      Previous : Organs.Texts.Part;
      --  The previous pass's thought; empty for the first pass
   end record;
   --  What a pass reasons from, each text kept in the store it is given

   subtype Call_Record is Organs.Model_Port.Call_Record;
   --  Asked False: the organ thought without a model

   function Is_Kept_In
     (Store : Organs.Texts.Store; Pass : Pass_Facts) return Boolean is
     (Organs.Texts.Is_Kept (Store, Pass.Draw)
      and then Organs.Texts.Is_Kept (Store, Pass.Recall)
      and then Organs.Texts.Is_Kept (Store, Pass.Previous));

   procedure Reason
     (Self    : Organ;
      Pass    : Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Organs.Texts.Store;
      Call    : out Call_Record) is abstract
   with Pre'Class  => Organs.Texts.Is_Writing (Thought)
                      and then Is_Kept_In (Thought, Pass),
        Post'Class => Organs.Texts.Is_Writing (Thought);
   --  Add one pass's thought to the part being written into Thought (read
   --  the kept texts with Organs.Texts.Text_Of, or quote them with
   --  Add_Kept).  Input is the turn as said; Focus its first words.

   Max_Synthesis_Bytes : constant := 4096;
   --  The longest output a cognition synthesizes itself

   type Thought_Parts is array (Energy_Gate.Pass_Index) of Organs.Texts.Part;

   type Synthesis_Facts is record
      Passes   : Energy_Gate.Pass_Count;
      Thoughts : Thought_Parts;
      --  The thoughts of passes 1 .. Passes (the others are empty)
      Recall   : Organs.Texts.Part;
      Route    : Organs.Texts.Part;
      --  The route the static table chose (L2: given, never chosen)
   end record;

   function Are_Kept
     (Store : Organs.Texts.Store; Parts : Thought_Parts) return Boolean is
     (for all Pass in Parts'Range => Organs.Texts.Is_Kept (Store, Parts (Pass)));

   procedure Synthesize
     (Self   : Organ;
      Given  : Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Organs.Texts.Store;
      Call   : out Call_Record) is abstract
   with Pre'Class  => Organs.Texts.Is_Writing (Output)
                      and then Organs.Texts.Is_Kept (Output, Given.Recall)
                      and then Organs.Texts.Is_Kept (Output, Given.Route)
                      and then Are_Kept (Output, Given.Thoughts),
        Post'Class => Organs.Texts.Is_Writing (Output);
   --  The turn's output, added to the part being written into Output
   --  (bounded by Max_Synthesis_Bytes), or nothing: then the cycle writes
   --  the output of the moves that ran, as the stub has it

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
