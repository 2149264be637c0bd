with AUnit.Assertions;
with Utf8;
with Organs;
with Organs.Texts;

package body Organs_Texts_Tests is

   use AUnit.Assertions;
   package Texts renames Organs.Texts;

   E_Acute : constant String := Character'Val (16#C3#) & Character'Val (16#A9#);
   Euro    : constant String := Character'Val (16#E2#) & Character'Val (16#82#) & Character'Val (16#AC#);

   function Is_Utf8 (Text : String) return Boolean is
     (Utf8.Prefix_Length (Text, Text'Length) = Text'Length);

   function Ends_With (Text, Tail : String) return Boolean is
     (Text'Length >= Tail'Length and then Text (Text'Last - Tail'Length + 1 .. Text'Last) = Tail);

   --  A part written in pieces reads back as the pieces joined, and as the
   --  same text kept whole; numbers and kept parts are pieces like others.
   procedure Test_Parts_In_Pieces (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Store : Texts.Store (512);
      Whole, Joined, Again : Texts.Part;
   begin
      Texts.Keep (Store, "draw: the tower", 64, Whole);
      Texts.Start_Part (Store, 128);
      Assert (Texts.Is_Writing (Store), "a part started is being written");
      Texts.Add (Store, "turn ");
      Texts.Add_Image (Store, 0);
      Texts.Add (Store, " ");
      Texts.Add_Image (Store, Natural'Last);
      Texts.Add (Store, ", ");
      Texts.Add_Fraction (Store, 0.875);
      Texts.Add (Store, ", ");
      Texts.Add_Fraction (Store, 1.0);
      Texts.Add (Store, ", ");
      Texts.Add_Fraction (Store, 0.05);
      Texts.Add (Store, " / ");
      Texts.Add_Kept (Store, Whole);
      Texts.Add (Store, "");
      Texts.End_Part (Store, Joined);
      Assert (not Texts.Is_Writing (Store), "a part ended is no longer written");
      Assert (Texts.Text_Of (Store, Joined) = "turn 0" & Natural'Last'Image & ", 0.875, 1.0, 0.05 / draw: the tower",
              "pieces join: " & Texts.Text_Of (Store, Joined));
      Texts.Keep (Store, Texts.Text_Of (Store, Joined), 128, Again);
      Assert (Texts.Text_Of (Store, Again) = Texts.Text_Of (Store, Joined), "a part written in pieces is the part kept whole");
      Assert (not Texts.Was_Cut (Store), "nothing was cut");
      Assert (Texts.Used (Store) = Texts.Length (Whole) + 2 * Texts.Length (Joined), "the store holds its parts back to back");
      Texts.Clear (Store);
      Assert (Texts.Used (Store) = 0, "a cleared store holds nothing");
   end Test_Parts_In_Pieces;

   --  A part never passes its bound: what would pass it is cut on a
   --  character boundary and the part ends with the cut mark, within the
   --  bound, whatever the pieces; pieces after a cut are left out; the
   --  next part is whole again.  Every bound from the least to past the
   --  text, against texts of one-, two- and three-byte characters.
   procedure Test_Cut_At_The_Bound (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Mark : constant String := Texts.Cut_Mark;
   begin
      for Width in 1 .. 3 loop
         declare
            Unit : constant String := (case Width is when 1 => "a", when 2 => E_Acute, when others => Euro);
            Text : constant String := Unit & Unit & Unit & Unit & Unit & Unit & Unit & Unit & Unit & Unit & Unit & Unit;
         begin
            for Bound in Texts.Part_Bound'First .. Text'Length + 4 loop
               for Split in 0 .. Text'Length / Unit'Length loop
                  declare
                     Store : Texts.Store (4 * Text'Length + 64);
                     Part, Next : Texts.Part;
                     At_Byte : constant Natural := Split * Unit'Length;
                     What : constant String := "bound" & Bound'Image & ", split at" & At_Byte'Image;
                  begin
                     Texts.Start_Part (Store, Bound);
                     Texts.Add (Store, Text (Text'First .. Text'First + At_Byte - 1));
                     Texts.Add (Store, Text (Text'First + At_Byte .. Text'Last));
                     Texts.Add (Store, "z");
                     Texts.End_Part (Store, Part);
                     declare
                        Got : constant String := Texts.Text_Of (Store, Part);
                     begin
                        Assert (Got'Length <= Bound, What & ": within the bound");
                        Assert (Is_Utf8 (Got), What & ": never cuts a character");
                        if Text'Length + 1 <= Bound then
                           Assert (Got = Text & "z" and then not Texts.Was_Cut (Store), What & ": whole when it fits");
                        else
                           Assert (Ends_With (Got, Mark) and then Texts.Was_Cut (Store), What & ": cut visibly: " & Got);
                           declare
                              Kept : constant String := Got (Got'First .. Got'Last - Mark'Length);
                           begin
                              Assert (Kept = Text (Text'First .. Text'First + Kept'Length - 1),
                                      What & ": what is kept is the text's start");
                              Assert (Kept'Length + Unit'Length > Bound - Mark'Length,
                                      What & ": as much of it as the bound leaves room for");
                           end;
                        end if;
                     end;
                     Texts.Keep (Store, "next", 16, Next);
                     Assert (Texts.Text_Of (Store, Next) = "next", What & ": the next part is whole");
                  end;
               end loop;
            end loop;
         end;
      end loop;
   end Test_Cut_At_The_Bound;

   --  A store smaller than the bounds written into it clamps the part to
   --  its room, and the part still ends validly: cut visibly where the mark
   --  fits, else empty, never past the store
   procedure Test_A_Store_Short_Of_Room (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Store : Texts.Store (20);
      First, Second, Third : Texts.Part;
   begin
      Texts.Keep (Store, "abcdefghij", 64, First);
      Assert (Texts.Text_Of (Store, First) = "abcdefghij", "a part that fits the room is whole");
      Texts.Start_Part (Store, 64);
      Texts.Add (Store, "0123456789AB");
      Texts.End_Part (Store, Second);
      Assert (Texts.Text_Of (Store, Second) = "0123" & Texts.Cut_Mark, "clamped to the room, cut visibly: "
              & Texts.Text_Of (Store, Second));
      Texts.Keep (Store, "more", 64, Third);
      Assert (Texts.Is_Empty (Third) and then Texts.Used (Store) = 20, "a full store keeps empty parts");
      Assert (Texts.Was_Cut (Store), "and says it cut");
   end Test_A_Store_Short_Of_Room;

   --  An organ's text quoted within a larger part is held to the organ's
   --  bound, cut the same visible way, and the part goes on after it
   procedure Test_A_Text_Held_To_Its_Bound (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
      Store : Texts.Store (256);
      Part  : Texts.Part;
      Long  : constant String := "abc" & E_Acute & E_Acute & E_Acute & E_Acute & "def";
   begin
      Texts.Start_Part (Store, 128);
      Texts.Add (Store, "card ");
      Texts.Add_Within (Store, Long, 12);
      Texts.Add (Store, ", then ");
      Texts.Add_Within (Store, "short", 14);
      Texts.End_Part (Store, Part);
      Assert (Texts.Text_Of (Store, Part) = "card abc" & E_Acute & Texts.Cut_Mark & ", then short",
              "held to its bound, between characters: " & Texts.Text_Of (Store, Part));
      Assert (Texts.Was_Cut (Store), "the store knows it cut");
   end Test_A_Text_Held_To_Its_Bound;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Parts_In_Pieces'Access, "a part written in pieces is the pieces joined");
      Register_Routine (T, Test_Cut_At_The_Bound'Access, "a part is cut at its bound, visibly, between characters");
      Register_Routine (T, Test_A_Store_Short_Of_Room'Access, "a store short of room still ends its parts validly");
      Register_Routine (T, Test_A_Text_Held_To_Its_Bound'Access, "an organ's text within a part is held to its bound");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Organs.Texts");
   end Name;

end Organs_Texts_Tests;
