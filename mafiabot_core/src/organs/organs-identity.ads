--  B2, identity: the body's Big-3, fixed once at boot.
--
--  Contract: three distinct cards drawn from the deck with the fixture's
--  identity seed, one per role (sun, moon, rising by default); the same
--  fixture always gives the same Big-3.  The SOUL.md document that carries
--  it to Hermes is derived from it alone.

with Organs.Deck;

package Organs.Identity is

   type Big_Three is array (1 .. 3) of Organs.Deck.Card;

   function Draw (Stub : Fixture) return Big_Three
   with Post => Draw'Result (1) /= Draw'Result (2)
                and then Draw'Result (1) /= Draw'Result (3)
                and then Draw'Result (2) /= Draw'Result (3);

   function Soul_Document (Stub : Fixture; Cards : Big_Three) return String;
   --  The Markdown text of SOUL.md

end Organs.Identity;
