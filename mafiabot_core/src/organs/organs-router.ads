--  D1, the Ada router (law L2: routing is Ada's job, not the model's).
--
--  Contract: a static table from intent to route, fixed at compile time; no
--  fixture, model output or session state can add or change a route.  It
--  is no seam: no implementation is chosen at start-up, for a router a
--  second implementation could replace would break L2.  A route is a
--  plain ASCII name of at most Max_Route_Bytes bytes.

package Organs.Router is

   Max_Route_Bytes : constant := 32;

   function Route_Of (Intent : Intent_Kind) return String is
     (case Intent is
         when Ask      => "knowledge.answer",
         when Act      => "tools.execute",
         when Remember => "memory.store",
         when Chat     => "conversation.reply")
   with Post => Is_Within (Route_Of'Result, Max_Route_Bytes);

end Organs.Router;
