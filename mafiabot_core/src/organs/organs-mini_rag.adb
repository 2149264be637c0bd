with Ada.Strings.Unbounded;
with Organs.Router;

package body Organs.Mini_Rag is

   use Ada.Strings.Unbounded;

   function Packing return String is
      Packed : Unbounded_String;
   begin
      for Intent in Intent_Kind loop
         if Intent /= Intent_Kind'First then
            Append (Packed, '|');
         end if;
         Append (Packed, Intent_Name (Intent)
                 & "->" & Organs.Router.Route_Of (Intent));
      end loop;
      return To_String (Packed);
   end Packing;

   Packed : constant String := Packing;
   --  The router's table is static: packed once, not on every turn

   function Whole_Table return String is (Packed);

end Organs.Mini_Rag;
