--  D3, mini-rag: packs the tool schema the model sees when it states its
--  intent (step 19).
--
--  Contract any mini-rag honours: the packed schema names routes of the
--  Ada router's table only, each after its intent ("intent->route",
--  separated by '|'), and every intent the router knows; it depends on the
--  turn's input alone and is at most Max_Schema_Bytes (the cycle cuts a
--  longer one, visibly).  Packing costs time linear in the input.

package Organs.Mini_Rag is

   Max_Schema_Bytes : constant := 256;

   type Organ is limited interface;

   function Packed_Schema (Self : Organ; Input : String) return String
   is abstract;
   --  The schema for the turn of Input

   function Whole_Table return String;
   --  Every route of the router's table, in its order:
   --  "ask->knowledge.answer|act->tools.execute|..."

   procedure For_Each_Intent
     (Packed  : String;
      Process : not null access procedure
                  (Intent : Intent_Kind; Route : String));
   --  Each entry of a packed schema that names one of the router's
   --  intents, in order, with the route it packs after it: the closed set
   --  an intender offers its model, read from the schema as packed (an
   --  entry naming no intent is left out)

end Organs.Mini_Rag;
