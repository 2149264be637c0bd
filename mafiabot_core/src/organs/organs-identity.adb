with Organs.Celtic_Cross;

package body Organs.Identity is

   function Draw (Stub : Fixture) return Big_Three is
      State : Organs.Celtic_Cross.Draw_State :=
        Organs.Celtic_Cross.Shuffled_For
          (Stub, "identity" & Stub.Identity_Seed'Image);
      Cards : Big_Three := [others => 1];
      Taken : Natural := 0;
      Drawn : Organs.Celtic_Cross.Draw;
   begin
      --  The deck holds at least three distinct positions, so this ends.
      while Taken < 3 loop
         Organs.Celtic_Cross.Next (State, Stub, Drawn);
         if (for all K in 1 .. Taken => Cards (K) /= Drawn.Card) then
            Taken := Taken + 1;
            Cards (Taken) := Drawn.Card;
         end if;
      end loop;
      return Cards;
   end Draw;

   function Soul_Document (Stub : Fixture; Cards : Big_Three) return String is
      LF   : constant Character := ASCII.LF;
      Text : Unbounded_String := To_Unbounded_String
        ("# SOUL" & LF & LF
         & "You are the voice of the mafiabot body. Every turn you are given"
         & " has been carried" & LF
         & "through its 23-step metacognitive cycle; speak from its trace,"
         & " and keep each room's" & LF
         & "matters inside that room." & LF & LF
         & "## Big-3" & LF & LF);
   begin
      for Role in Cards'Range loop
         Append (Text, "- " & Stub.Roles (Role).all & ": "
                 & Organs.Deck.Name (Stub, Cards (Role)).all & LF);
      end loop;
      Append (Text, LF & "(drawn from the " & To_String (Stub.Name)
              & " organ fixture, identity seed"
              & Stub.Identity_Seed'Image & ")" & LF);
      return To_String (Text);
   end Soul_Document;

end Organs.Identity;
