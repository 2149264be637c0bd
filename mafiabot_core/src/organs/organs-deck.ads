--  B1, the deck: the cards every draw comes from.
--
--  Contract: a fixed, ordered deck of at least three distinct names; a card
--  is identified by its position, so draws are reproducible.

package Organs.Deck is

   subtype Card is Positive;

   function Size (Stub : Fixture) return Positive is
     (Positive (Stub.Cards.Length));

   function Name (Stub : Fixture; Which : Card) return not null Fixture_Text
   is (Stub.Cards.Element (Which))
   with Pre => Which <= Size (Stub);
   --  The card's name as the fixture spells it, read where it stands

end Organs.Deck;
