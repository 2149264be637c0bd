--  B1, the deck: the cards every draw comes from.
--
--  Contract any deck honours: a fixed, ordered deck of 3 .. Max_Cards
--  distinct names, the same for as long as the body runs; a card is its
--  position, so a draw is reproducible from the position alone.  Names are
--  UTF-8 of 1 .. Max_Name_Bytes bytes (the cycle cuts a longer one,
--  visibly).  Size and Name answer at once (a table lookup: no I/O).  A
--  deck holds nothing of any session (L1).

package Organs.Deck is

   Max_Cards : constant := 1024;

   type Card_Count is range 0 .. Max_Cards;

   subtype Card is Card_Count range 1 .. Max_Cards;
   --  A position in a deck; a card of a given deck is at most its Size,
   --  which every organ that draws one promises (Celtic_Cross.Next,
   --  Identity.Draw)

   type Organ is limited interface;

   function Size (Self : Organ) return Card_Count is abstract
   with Post'Class => Size'Result >= 3;

   function Name (Self : Organ; Which : Card) return String is abstract
   with Pre'Class => Which <= Self.Size;
   --  The card's name

end Organs.Deck;
