--  C2, cognition: the reasoning step of each pass, the synthesis (step 22:
--  the cycle joins the passes' moves, named here) and the coherence check
--  (step 23).
--
--  Contract: Reason depends only on its arguments.  Cohere contrasts the
--  output with the final cognition and reports drift; its result is
--  reported and never fed back into anything (law L4).

with Json_Text;

package Organs.Cognition is

   function Move_Name (Stub : Fixture; Way : Direction; Rank : Quarter)
     return not null Fixture_Text is
     (if Way = Descent then Stub.Descent_Moves (Rank)
      else Stub.Ascent_Moves (Rank));
   --  The fixture's name for the move of a pass (abstract, ..., commit),
   --  read where it stands

   procedure Reason
     (Stub  : Fixture;
      Way   : Direction;
      Rank  : Quarter;
      Focus : String;
      Draw  : Json_Text.Stored_Text;
      Into  : in out Json_Text.Text_Store)
   with Pre => Json_Text.Is_Writing (Into)
               and then Json_Text.Is_Kept (Into, Draw);
   --  Add one pass's thought to the text being written Into: "<move>
   --  'focus' through <draw>", the draw being a text kept Into before

   type Coherence is record
      Score : Millis;
      --  How much of the output's vocabulary the final cognition shares
      Drift : Millis;
      --  1 - Score
   end record;

   function Cohere (Output, Final_Cognition : String) return Coherence
   with Post => Cohere'Result.Score + Cohere'Result.Drift = Energy_Gate.Full;
   --  Word-set overlap (Jaccard) of the two texts

end Organs.Cognition;
