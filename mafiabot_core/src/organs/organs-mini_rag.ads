--  D3, mini-rag: packs the tool schema the model sees when it states its
--  intent (step 19).
--
--  Contract: the packed schema lists every route of the Ada router's table,
--  in the table's order, and nothing that is not in it.

package Organs.Mini_Rag is

   function Packed_Schema return String;
   --  "ask->knowledge.answer|act->tools.execute|..."

end Organs.Mini_Rag;
