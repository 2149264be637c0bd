--  C2 asked of a model: a cognition whose every pass, and whose synthesis,
--  is one question to the host's own model through a Model_Port (over MCP
--  sampling, in the body).  It honours Organs.Cognition's contract:
--
--  - a pass's prompt holds the pass's move, its draw, this session's
--    recall, the previous pass's thought and the turn as said (cut to
--    Max_Input_Bytes); the synthesis's the turn, the route the static
--    table chose, the recall and the thoughts of the passes that ran.
--    Nothing of another session (L1), nothing of coherence (L4), and the
--    model is never asked to route (L2) nor to choose passes (L3);
--  - each question waits at most Timeout_Ms (the port may hold an earlier
--    turn deadline) for at most Max_Tokens tokens;
--  - a pass whose question got no answer ends with a thought saying so,
--    and the turn goes on; a synthesis that got none writes nothing, so
--    the cycle writes the output of the moves that ran;
--  - where the port cannot reach a model at all (Reach_Of /= Reachable),
--    every pass and the synthesis are the Fallback's, asking nothing.
--
--  Move names are the Fallback's: the methodology is the fixture's, the
--  model only thinks each move.

with Organs.Cognition;
with Organs.Model_Port;
with Organs.Texts;

package Organs.Model_Cognition is

   Max_Input_Bytes : constant := Organs.Model_Port.Max_Quoted_Input_Bytes;
   --  How much of the turn a prompt quotes

   subtype Timeout_Millis is Positive range 1 .. 3_600_000;

   type Organ
     (Fallback   : not null access constant Organs.Cognition.Organ'Class;
      Timeout_Ms : Timeout_Millis;
      Max_Tokens : Positive)
   is limited new Organs.Cognition.Organ with null record;

   overriding function Move_Name
     (Self : Organ; Way : Direction; Rank : Quarter) return String;

   overriding procedure Reason
     (Self    : Organ;
      Pass    : Organs.Cognition.Pass_Facts;
      Input   : String;
      Focus   : String;
      Port    : in out Organs.Model_Port.Port'Class;
      Thought : in out Organs.Texts.Store;
      Call    : out Organs.Cognition.Call_Record);
   --  "<move>: <the model's answer>", or "<move>: no thought (<status>:
   --  <why>)"

   overriding procedure Synthesize
     (Self   : Organ;
      Given  : Organs.Cognition.Synthesis_Facts;
      Input  : String;
      Port   : in out Organs.Model_Port.Port'Class;
      Output : in out Organs.Texts.Store;
      Call   : out Organs.Cognition.Call_Record);
   --  The model's answer, or nothing

   System_Prompt : constant String :=
     "You are the reasoning organ of mafiabot, asked for one step of its"
     & " fixed metacognitive cycle. Answer with that step's text alone, in"
     & " plain text, briefly.";
   --  Every question's system prompt

   function Pass_Prompt
     (Move, Draw, Recall, Previous, Input : String;
      Pass : Positive; Way : Direction) return String;
   --  A pass's question (exposed for the tests that read it back)

end Organs.Model_Cognition;
