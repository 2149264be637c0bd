--  The seam every organ is chosen through: one access per organ, filled at
--  start-up by whatever provides the implementations (the stub organs of a
--  fixture, Stub_Organs.Organs_Of; a test's own; the next issue's sampling
--  cognition), and read by the cycle and the session table alone.  The
--  organs are read-only once chosen: a set is shared by every session, and
--  no organ keeps state of its own between calls (L1: a session's state
--  is in its record).  An organ that needs state of its own (a memory over
--  a database) gets it from what its session's repository lends the turn
--  (Organs.Morag.Memory), never in the organ: docs/recall.md.

with Organs.Celtic_Cross;
with Organs.Cognition;
with Organs.Deck;
with Organs.Drive_Box;
with Organs.Identity;
with Organs.Intender;
with Organs.Mini_Rag;
with Organs.Morag;

package Organs.Sets is

   type Drive_Box_Organ is access constant Organs.Drive_Box.Organ'Class;
   type Deck_Organ is access constant Organs.Deck.Organ'Class;
   type Identity_Organ is access constant Organs.Identity.Organ'Class;
   type Celtic_Cross_Organ is access constant Organs.Celtic_Cross.Organ'Class;
   type Morag_Organ is access constant Organs.Morag.Organ'Class;
   type Cognition_Organ is access constant Organs.Cognition.Organ'Class;
   type Mini_Rag_Organ is access constant Organs.Mini_Rag.Organ'Class;
   type Intender_Organ is access constant Organs.Intender.Organ'Class;

   type Organ_Set is record
      Drive_Box    : Drive_Box_Organ;
      Deck         : Deck_Organ;
      Identity     : Identity_Organ;
      Celtic_Cross : Celtic_Cross_Organ;
      Morag        : Morag_Organ;
      Cognition    : Cognition_Organ;
      Mini_Rag     : Mini_Rag_Organ;
      Intender     : Intender_Organ;
   end record;

   function Is_Complete (Set : Organ_Set) return Boolean is
     (Set.Drive_Box /= null and then Set.Deck /= null
      and then Set.Identity /= null and then Set.Celtic_Cross /= null
      and then Set.Morag /= null and then Set.Cognition /= null
      and then Set.Mini_Rag /= null and then Set.Intender /= null);
   --  Every organ chosen

end Organs.Sets;
