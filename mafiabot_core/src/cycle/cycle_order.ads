--  The static order of the cycle (law L3).  Every turn walks these 23 steps
--  in this order; Energy only decides which of the eight passes (steps 3 to
--  18) run, and those that do are always a prefix.  Nothing at run time can
--  reorder, add or remove a step: the table is a constant.

with Energy_Gate;

package Cycle_Order is

   type Step_Index is range 1 .. 23;

   type Phase_Kind is
     (Scope, Sense, Draw, Reason, Pack, Intend, Route, Synthesize, Cohere);

   subtype Pass_Phase is Phase_Kind range Draw .. Reason;

   function Phase (Step : Step_Index) return Phase_Kind is
     (case Step is
         when 1 => Scope,
         when 2 => Sense,
         when 3 .. 18 => (if Step mod 2 = 1 then Draw else Reason),
         when 19 => Pack,
         when 20 => Intend,
         when 21 => Route,
         when 22 => Synthesize,
         when 23 => Cohere);

   function Pass_Of (Step : Step_Index) return Energy_Gate.Pass_Index is
     (Energy_Gate.Pass_Index ((Step - 3) / 2 + 1))
   with Pre => Phase (Step) in Pass_Phase;
   --  Steps 3-4 are pass 1, ..., steps 17-18 pass 8

   function Name (Step : Step_Index) return String;
   --  "scope", "sense", "descent-1-draw", "descent-1-reason", ...,
   --  "ascent-4-reason", "pack", "intend", "route", "synthesize", "cohere"

   function Organ (Step : Step_Index) return String;
   --  The organ (or organs) behind the step, by design-card code

end Cycle_Order;
