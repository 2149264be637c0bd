--  B2, identity: the body's Big-3, fixed once at boot.
--
--  Contract any identity honours: three distinct cards of the deck, one per
--  role; the same organs always give the same Big-3 (it is drawn once, at
--  start-up, and never again); role names are UTF-8 of 1 .. Max_Name_Bytes
--  bytes.  The SOUL.md document that carries the Big-3 to Hermes is derived
--  from it, the deck's names and the identity's provenance alone
--  (Soul_Document, the same for every implementation).  Drawn once, before
--  the first line is served, it costs no turn anything; it sees no session.

with Organs.Deck;

package Organs.Identity is

   use type Organs.Deck.Card_Count;

   type Role is range 1 .. 3;

   type Big_Three is array (Role) of Organs.Deck.Card;

   function Are_Distinct (Cards : Big_Three) return Boolean is
     (Cards (1) /= Cards (2) and then Cards (1) /= Cards (3)
      and then Cards (2) /= Cards (3));

   function Are_Cards_Of
     (Cards : Big_Three; From : Organs.Deck.Organ'Class) return Boolean is
     (for all Card of Cards => Card <= From.Size);

   type Organ is limited interface;

   function Draw (Self : Organ; From : Organs.Deck.Organ'Class)
     return Big_Three is abstract
   with Post'Class => Are_Distinct (Draw'Result)
                      and then Are_Cards_Of (Draw'Result, From);

   function Role_Name (Self : Organ; Which : Role) return String
   is abstract;
   --  sun, moon, rising, ...

   function Provenance (Self : Organ) return String is abstract;
   --  Where the Big-3 came from, in one line of SOUL.md

   function Soul_Document
     (Self  : Organ'Class;
      From  : Organs.Deck.Organ'Class;
      Cards : Big_Three) return String
   with Pre => Are_Cards_Of (Cards, From);
   --  The Markdown text of SOUL.md

end Organs.Identity;
