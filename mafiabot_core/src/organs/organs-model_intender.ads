--  C3 asked of a model (--intent model): one question a turn to the host's
--  own model, through a Model_Port, offering it the closed set of intents
--  the packed schema (D3) names and asking for one of them by name.  It
--  honours Organs.Intender's contract:
--
--  - the question holds the intents offered, each beside the route the
--    body's static table gives it (what the model may know, never what it
--    chooses: L2), and the turn as said (Model_Port.Quoted_Input); nothing
--    of the passes' thoughts, of another session (L1) or of coherence (L4);
--  - the answer is read strictly: once the white space around it and one
--    trailing period are dropped, it must be an offered intent's name, in
--    any case; anything else (a route, a sentence, two names) names none;
--  - where the answer names no offered intent, where no answer came, or
--    where the port cannot reach a model, the Fallback (the rules) states
--    the intent, given a port that asks nothing, and the Statement says
--    why; the basis says it in a few words;
--  - the question waits at most Timeout_Ms (the port may hold an earlier
--    turn deadline) for at most Max_Intent_Tokens tokens.

with Organs.Intender;
with Organs.Model_Port;
with Organs.Texts;

package Organs.Model_Intender is

   Max_Intent_Tokens : constant := 16;
   --  One word is asked for: room for a period or a stray word, so that a
   --  chatty model is cut short rather than billed for a paragraph

   subtype Timeout_Millis is Positive range 1 .. 3_600_000;

   type Organ
     (Fallback   : not null access constant Organs.Intender.Organ'Class;
      Timeout_Ms : Timeout_Millis)
   is limited new Organs.Intender.Organ with null record;

   overriding function Asks_Model (Self : Organ) return Boolean is (True);

   overriding procedure State_Intent
     (Self          : Organ;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Organs.Intender.Statement;
      Basis         : in out Organs.Texts.Store;
      Call          : out Organs.Model_Port.Call_Record);
   --  Named by the model: basis "named by the model"; else the Fallback's
   --  basis and why ("; the model named no intent", "; the model gave no
   --  answer", "; no model to ask")

   System_Prompt : constant String :=
     "You are the intent organ of mafiabot. You name the intent of one user"
     & " turn, chosen from a closed set. Answer with the intent's name"
     & " alone: one word of the set, nothing else.";
   --  The intent question's system prompt

   function Intent_Prompt (Packed_Schema, Input : String) return String;
   --  The intent question (exposed for the tests that read it back)

   procedure Read_Answer
     (Answer        : String;
      Packed_Schema : String;
      Found         : out Boolean;
      Intent        : out Intent_Kind);
   --  Whether Answer names an intent Packed_Schema offers, and which: the
   --  strict reading above

end Organs.Model_Intender;
