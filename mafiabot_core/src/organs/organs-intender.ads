--  C3, the model's intent (step 20).
--
--  Contract any intender honours: given the turn's input and the schema
--  mini-rag packed (step 19), it states one of the router's intents and,
--  in a part bounded by Max_Basis_Bytes, the basis it stated it on (a few
--  words; the store cuts a longer basis, visibly).  Its answer depends on
--  those two texts and on what the model port answers alone (nothing of
--  another session, L1; nothing of the passes' thoughts nor of coherence,
--  L4), so a turn is reproducible given its answers; the body's own work
--  costs time linear in them.  It never routes (L2): the router's static
--  table does, from the intent.  An intender that asks a model (Asks_Model)
--  asks it once per turn, through the port it is given, offering the
--  closed set of intents the packed schema names; an answer that names
--  none of them, or none at all, leaves the intent to the rules, and the
--  Statement says so and why.

with Organs.Model_Port;
with Organs.Texts;

package Organs.Intender is

   Max_Basis_Bytes : constant := 64;

   Max_Said_Bytes : constant := 64;
   --  What the model answered, as the trace quotes it (cut, visibly):
   --  an intent's name is one word, and a longer answer is no intent

   type Intent_Source is
     (Rules,
      --  The rules stated it (the stub's fixture rules)
      Model);
      --  The model named it, from the closed set it was offered

   type Model_Fallback is
     (No_Fallback,
      --  The model stated the intent, or no model was the intender's to ask
      Unreachable,
      --  The client cannot be asked (it did not declare sampling)
      Unanswered,
      --  The question got no answer (the call's status and error say why)
      Outside_Set);
      --  The answer names none of the intents offered
   --  Why the rules stated the intent of an intender that asks a model

   subtype Said_Length is Natural range 0 .. Max_Said_Bytes;

   type Statement is record
      Intent    : Intent_Kind := Chat;
      Source    : Intent_Source := Rules;
      Fallback  : Model_Fallback := No_Fallback;
      Said      : String (1 .. Max_Said_Bytes);
      Said_Last : Said_Length := 0;
      --  Said (1 .. Said_Last): the model's answer, empty when none came
   end record;
   --  What State_Intent came to, beside its basis.  Only the first
   --  Said_Last bytes of Said are ever read

   function Said_Of (Stated : Statement) return String is
     (Stated.Said (1 .. Stated.Said_Last));

   type Organ is limited interface;

   function Asks_Model (Self : Organ) return Boolean is abstract;
   --  Whether State_Intent asks the model, once a turn: a turn of this
   --  intender plans Energy_Gate.Planned_Calls (Passes, Asks_Model) calls

   procedure State_Intent
     (Self          : Organ;
      Input         : String;
      Packed_Schema : String;
      Port          : in out Organs.Model_Port.Port'Class;
      Stated        : out Statement;
      Basis         : in out Organs.Texts.Store;
      Call          : out Organs.Model_Port.Call_Record) is abstract
   with Pre'Class  => Organs.Texts.Is_Writing (Basis),
        Post'Class => Organs.Texts.Is_Writing (Basis)
                      and then (if Call.Asked then Self.Asks_Model)
                      and then (if Stated.Source = Model
                                then Call.Asked
                                     and then Stated.Fallback = No_Fallback)
                      and then (Stated.Fallback = No_Fallback
                                or else Self.Asks_Model);
   --  The intent of Input, said in Stated, and its basis added to the part
   --  being written into Basis; Call: the question asked of the model
   --  through Port, if any (Asked False: none)

end Organs.Intender;
