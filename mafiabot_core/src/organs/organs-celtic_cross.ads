--  B3, the Celtic Cross: one draw before each reasoning pass.
--
--  Contract: draws are deterministic per session (the same key and the same
--  sequence of turns give the same cards) and independent of every other
--  session; a pass's draw names the cross position of that pass.

with Interfaces;
with Json_Text;
with Organs.Deck;

package Organs.Celtic_Cross is

   type Draw_State is private;

   function Shuffled_For (Stub : Fixture; Session_Key : String)
     return Draw_State;

   type Draw is record
      Card     : Organs.Deck.Card;
      Reversed : Boolean;
   end record;

   procedure Next (Self : in out Draw_State; Stub : Fixture; Result : out Draw);

   procedure Describe
     (Stub   : Fixture;
      Result : Draw;
      Pass   : Energy_Gate.Pass_Index;
      Into   : in out Json_Text.Text_Store)
   with Pre => Json_Text.Is_Writing (Into);
   --  Add the draw's description to the text being written Into: "The
   --  Tower, reversed, in challenge"

private

   type Draw_State is record
      Seed : Interfaces.Unsigned_64 := 0;
   end record;

end Organs.Celtic_Cross;
