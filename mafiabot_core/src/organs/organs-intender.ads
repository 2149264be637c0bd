--  C3, the model's intent (step 20).
--
--  Contract any intender honours: given the turn's input and the schema
--  mini-rag packed (step 19), it states one of the router's intents and,
--  in a part bounded by Max_Basis_Bytes, the basis it stated it on (a few
--  words; the store cuts a longer basis, visibly).  Its answer depends on
--  those two texts alone (nothing of another session, L1), so a turn is
--  reproducible; it costs time linear in them.  It never routes (L2): the
--  router's static table does, from the intent.

with Organs.Texts;

package Organs.Intender is

   Max_Basis_Bytes : constant := 64;

   type Organ is limited interface;

   procedure State_Intent
     (Self          : Organ;
      Input         : String;
      Packed_Schema : String;
      Intent        : out Intent_Kind;
      Basis         : in out Organs.Texts.Store) is abstract
   with Pre'Class => Organs.Texts.Is_Writing (Basis);
   --  The intent of Input, and its basis added to the part being written
   --  into Basis

end Organs.Intender;
