with Ada.Containers.Indefinite_Vectors;
with AUnit.Assertions;
with Session_Table;
with Test_Organs;

package body Session_Table_Tests is

   use AUnit.Assertions;

   package Key_Vectors is new Ada.Containers.Indefinite_Vectors (Positive, String);

   --  Against a plain model (a list, most recent last) over thousands of
   --  opens with a small capacity: every session the model still holds is
   --  found with its turn count, every one it evicted starts afresh, and
   --  the table never holds more than its capacity.  Hits, inserts,
   --  evictions and the table's growth all exercise the probing and the
   --  gap-closing deletion.
   procedure Test_Matches_An_Lru_Model (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Table    : Session_Table.Table;
      Model    : Key_Vectors.Vector;
      Turns    : array (0 .. 399) of Natural := [others => 0];
      Capacity : constant := 37;
      State    : Long_Long_Integer := 12345;
   begin
      Table.Set_Capacity (Capacity);
      for Step in 1 .. 5_000 loop
         State := (State * 1103515245 + 12345) mod 2**31;
         --  A linear congruential generator: the same walk every run
         declare
            Which   : constant Natural := Natural ((State / 7) mod (if Step mod 3 = 0 then 400 else 45));
            Key     : constant String := "u" & Which'Image & ASCII.US & "c" & ASCII.US & "s";
            Session : Session_Table.Session_Access;
            Memory  : Session_Table.Memory_Access;
            Place   : constant Key_Vectors.Extended_Index := Model.Find_Index (Key);
         begin
            Table.Open (Test_Organs.Stub_Set, Key, Session, Memory);
            if Place = Key_Vectors.No_Index then
               Assert (Session.Turns = 0, "a new or evicted session starts afresh: " & Key);
               if Natural (Model.Length) = Capacity then
                  Model.Delete_First;
               end if;
               Turns (Which) := 0;
            else
               Assert (Session.Turns = Turns (Which), "a kept session keeps its turns: " & Key);
               Model.Delete (Place);
            end if;
            Model.Append (Key);
            Session.Turns := Session.Turns + 1;
            Turns (Which) := Session.Turns;
            Assert (Table.Count = Natural (Model.Length), "the table holds what the model holds");
         end;
      end loop;
   end Test_Matches_An_Lru_Model;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Matches_An_Lru_Model'Access, "the table behaves as a bounded LRU map");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Session_Table");
   end Name;

end Session_Table_Tests;
