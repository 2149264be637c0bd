package body Cycle_Order is

   function Name (Step : Step_Index) return String is
   begin
      case Phase (Step) is
         when Pass_Phase =>
            declare
               Pass  : constant Positive := Positive (Pass_Of (Step));
               Rank  : constant String :=
                 [1 => Character'Val (Character'Pos ('0') + (Pass - 1) mod 4 + 1)];
               Half  : constant String :=
                 (if Pass <= 4 then "descent-" else "ascent-");
            begin
               return Half & Rank
                 & (if Phase (Step) = Draw then "-draw" else "-reason");
            end;
         when Scope => return "scope";
         when Sense => return "sense";
         when Pack => return "pack";
         when Intend => return "intend";
         when Route => return "route";
         when Synthesize => return "synthesize";
         when Cohere => return "cohere";
      end case;
   end Name;

   function Organ (Step : Step_Index) return String is
     (case Phase (Step) is
         when Scope => "C1",
         when Sense => "A1+F1 via D1",
         when Draw => "B3",
         when Reason | Synthesize | Cohere => "C2",
         when Pack => "D3",
         when Intend => "C3",
         when Route => "D1");

end Cycle_Order;
