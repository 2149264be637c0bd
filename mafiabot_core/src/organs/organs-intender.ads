--  C3 stub, the model's intent (step 20).  A real model emits an intent
--  given the packed schema; the stub derives it from the input with the
--  fixture's keyword rules.
--
--  Contract: the intent is one of the router's intents, a function of the
--  turn's input only.

package Organs.Intender is

   type Stated_Intent is record
      Intent : Intent_Kind;
      Rule   : Natural;
      --  The fixture rule that matched, 0 for the default
   end record;

   function Intent_Of (Stub : Fixture; Input : String) return Stated_Intent;

end Organs.Intender;
