--  D1, the Ada router (law L2: routing is Ada's job, not the model's).
--
--  Contract: a static table from intent to route, fixed at compile time; no
--  fixture, model output or session state can add or change a route.

package Organs.Router is

   function Route_Of (Intent : Intent_Kind) return String is
     (case Intent is
         when Ask      => "knowledge.answer",
         when Act      => "tools.execute",
         when Remember => "memory.store",
         when Chat     => "conversation.reply");

end Organs.Router;
