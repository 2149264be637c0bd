--  B3, the Celtic Cross: one draw before each reasoning pass.
--
--  Contract any cross honours: draws are deterministic per session (the
--  same key and the same sequence of turns give the same cards) and depend
--  on that session's Draw_State alone, which the session's record keeps
--  (L1); every card drawn is a card of the deck drawn from; a pass's draw
--  lies in the cross position of that pass, whose name is UTF-8 of 1 ..
--  Max_Name_Bytes bytes.  A draw costs constant time.

with Energy_Gate;
with Organs.Deck;

package Organs.Celtic_Cross is

   use type Organs.Deck.Card_Count;

   type Draw_State is mod 2**64;
   --  What a session keeps of its draws between turns: one word

   type Draw is record
      Card     : Organs.Deck.Card;
      Reversed : Boolean;
   end record;

   type Organ is limited interface;

   function Shuffled_For (Self : Organ; Session_Key : String)
     return Draw_State is abstract;
   --  A new session's draw state, a function of its key alone

   procedure Next
     (Self   : Organ;
      From   : Organs.Deck.Organ'Class;
      State  : in out Draw_State;
      Result : out Draw) is abstract
   with Post'Class => Result.Card <= From.Size;
   --  The next draw of the session whose State it is

   function Position_Name
     (Self : Organ; Pass : Energy_Gate.Pass_Index) return String
   is abstract;
   --  The cross position of a pass: present, challenge, ...

end Organs.Celtic_Cross;
