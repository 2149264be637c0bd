with Ada.Strings.Unbounded;
with Organs.Router;

package body Organs.Mini_Rag is

   use Ada.Strings.Unbounded;

   Separator : constant Character := '|';
   Arrow     : constant String := "->";
   --  "intent->route|intent->route|...", as the spec says

   function Packing return String is
      Packed : Unbounded_String;
   begin
      for Intent in Intent_Kind loop
         if Intent /= Intent_Kind'First then
            Append (Packed, Separator);
         end if;
         Append (Packed, Intent_Name (Intent)
                 & Arrow & Organs.Router.Route_Of (Intent));
      end loop;
      return To_String (Packed);
   end Packing;

   Whole_Packing : constant String := Packing;
   --  The router's table is static: packed once, not on every turn

   function Whole_Table return String is (Whole_Packing);

   procedure For_Each_Intent
     (Packed  : String;
      Process : not null access procedure
                  (Intent : Intent_Kind; Route : String))
   is
      --  Process the entry Packed (First .. Last), if it names an intent
      procedure Read_Entry (First, Last : Positive) is
      begin
         for Split in First .. Last - Arrow'Length + 1 loop
            if Packed (Split .. Split + Arrow'Length - 1) = Arrow then
               for Intent in Intent_Kind loop
                  if Packed (First .. Split - 1) = Intent_Name (Intent)
                  then
                     Process (Intent, Packed (Split + Arrow'Length .. Last));
                  end if;
               end loop;
               return;
            end if;
         end loop;
      end Read_Entry;

      First : Positive := Packed'First;
   begin
      for Index in Packed'Range loop
         if Packed (Index) = Separator then
            if Index > First then
               Read_Entry (First, Index - 1);
            end if;
            First := Index + 1;
         end if;
      end loop;
      if First <= Packed'Last then
         Read_Entry (First, Packed'Last);
      end if;
   end For_Each_Intent;

end Organs.Mini_Rag;
