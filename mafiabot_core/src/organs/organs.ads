--  The organs behind the cycle.  Each child package is one organ's contract:
--  an interface (Organ) a real organ implements, with the bounds, the
--  determinism and the time budget any implementation must honour, and what
--  it may never see.  No organ spec names a fixture: the stub organs that
--  answer from the canned blocks of stubs/organs/*.json are one
--  implementation (Stub_Organs, src/stubs), chosen at start-up through the
--  same seam (Organs.Sets) a second one will use.
--
--  Laws every organ holds, whatever its implementation:
--  L1  an organ call sees one session's state, passed in; an organ keeps no
--      state of its own that outlives the call
--  L4  no organ is ever given the coherence check's result
--
--  This root package holds the types the organs share.  Nothing in organs/
--  (nor in cycle/) knows of JSON or of the protocol: the trace a turn makes
--  is plain Ada, and only the protocol layer spells it.

with Thousandths;

package Organs is

   subtype Millis is Thousandths.Count;

   type Fraction is delta 0.001 range 0.0 .. 1.0
   with Small => 0.001;
   --  Energy, coherence and drift: thousandths exactly, so every turn is
   --  reproducible byte for byte; a Fraction is represented as its Millis

   function To_Fraction (Value : Millis) return Fraction is
     (Fraction'Fixed_Value (Value));

   function To_Millis (Value : Fraction) return Millis is
     (Millis'Integer_Value (Value));

   type Intent_Kind is (Ask, Act, Remember, Chat);
   --  What the model means to do with a turn (step 20); the router maps
   --  each to a route by a static table (law L2)

   function Is_Word_Byte (C : Character) return Boolean is
     (C in 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' or else C >= Character'Val (128));
   --  Part of a word, for the organs that compare texts by their words:
   --  ASCII letters and digits, and every byte of a non-ASCII character

   function Folded (C : Character) return Character is
     (if C in 'A' .. 'Z' then Character'Val (Character'Pos (C) + 32) else C);
   --  ASCII case folding; bytes of UTF-8 sequences are left alone (Latin-1
   --  folding would rewrite them)

   function Folded (Text : String) return String is
     ([for Index in Text'Range => Folded (Text (Index))]);

   Not_A_Word : constant Character := ASCII.NUL;

   Word_Fold : constant array (Character) of Character :=
     [for C in Character =>
        (if Is_Word_Byte (C) then Folded (C) else Not_A_Word)];
   --  A byte as a word holds it (Folded), or Not_A_Word where words end:
   --  one look-up for every byte an organ that compares words reads

   type Direction is (Descent, Ascent);

   subtype Quarter is Positive range 1 .. 4;
   --  A pass's rank within its direction

   function Is_Within (Text : String; Bytes : Natural) return Boolean is
     (Text'Length <= Bytes);
   --  Text is at most Bytes long (a function, so that a contract stating a
   --  bound compares lengths as the code does, without wide arithmetic)

   function Intent_Name (Intent : Intent_Kind) return String;
   --  The intent as the wire and the fixture spell it: ask, act, ...

   Max_Name_Bytes : constant := 128;
   --  The longest name an organ gives a card, a role, a cross position or
   --  a move.  The cycle quotes a longer one cut to this bound, visibly
   --  (Organs.Texts.Cut_Mark); the trace's room is derived from it.  Names
   --  are values (String results), so an organ may make one per call: none
   --  need outlive the call that gives it.

private

   type Spelling is not null access constant String;

   Intent_Spellings : constant array (Intent_Kind) of Spelling :=
     [for Intent in Intent_Kind =>
        new String'(Folded (Intent'Image))];
   --  Spelled once: every turn names its intent several times

   function Intent_Name (Intent : Intent_Kind) return String is
     (Intent_Spellings (Intent).all);

end Organs;
