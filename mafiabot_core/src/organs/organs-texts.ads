--  Bounded texts kept back to back in one store: the texts of a turn's
--  trace, written by the cycle and by the organs that say something (a
--  thought, the intent's basis), with no allocation and no JSON.
--
--  Every part is written with a bound (the organ contract's bound for what
--  the organ says), and is never longer: a piece that would pass the bound
--  is cut there on a character boundary, and the part ends with Cut_Mark,
--  so a cut is always visible and the part is still valid UTF-8.  A store
--  sized as the sum of the bounds of the parts written into it (as the
--  trace's is, statically) therefore never runs out: a cut is always the
--  contract's, never the store's.  Were the room ever short all the same,
--  a part would be clamped to it and cut the same visible way.

with Utf8;

package Organs.Texts is

   Cut_Mark : constant String := " [cut]";
   --  Ends every part cut at its bound

   subtype Part_Bound is Positive range Cut_Mark'Length + 4 .. Positive'Last;
   --  A bound leaves room for the mark and some text before it

   type Part is record
      First : Positive := 1;
      Last  : Natural := 0;
   end record;
   --  The bytes First .. Last of a store (see Read); empty by default

   type Store (Capacity : Natural) is limited private
   with Type_Invariant => Is_Within_Capacity (Store);
   --  What lets Add copy without index checks, in every build: the checked
   --  build evaluates the invariant wherever a Store leaves this package,
   --  and in the unchecked one it rests on Start_Part and Clear alone,
   --  which are its only writers of Limit (not on any caller's precondition)

   function Is_Within_Capacity (Self : Store) return Boolean;
   --  The part being written, and every text kept, end within Capacity

   procedure Clear (Self : in out Store)
   with Post => Used (Self) = 0 and then not Is_Writing (Self)
                and then not Was_Cut (Self);
   --  Forget every text: parts kept before are no longer the store's

   function Used (Self : Store) return Natural;
   --  How many bytes the store holds

   function Is_Writing (Self : Store) return Boolean;
   --  A part was started and not yet ended

   function Was_Cut (Self : Store) return Boolean;
   --  Some part since the last Clear was cut at its bound

   procedure Start_Part (Self : in out Store; Bound : Part_Bound)
   with Pre  => not Is_Writing (Self),
        Post => Is_Writing (Self);
   --  A part of at most Bound bytes, written in pieces: Add, Add_Kept,
   --  Add_Image, then End_Part

   procedure Add (Self : in out Store; Piece : String)
   with Inline, Pre => Is_Writing (Self);
   --  Piece, or as much of it as the part's bound leaves room for and the
   --  cut mark (the pieces after a cut are left out).  Piece is UTF-8.

   procedure Add_Within
     (Self : in out Store; Piece : String; Bound : Part_Bound)
   with Pre => Is_Writing (Self);
   --  Piece, held to Bound bytes as a part is held to its bound (cut on a
   --  character boundary, Cut_Mark included): an organ's text, within a
   --  part that quotes it among other pieces

   procedure Add_Kept (Self : in out Store; Kept : Part)
   with Pre => Is_Writing (Self) and then Is_Kept (Self, Kept);
   --  A text kept before, copied again

   procedure Add_Image (Self : in out Store; Value : Natural)
   with Pre => Is_Writing (Self);
   --  Value in decimal, with no blank before it

   procedure Add_Fraction (Self : in out Store; Value : Fraction)
   with Pre => Is_Writing (Self);
   --  Value with at most three decimals and at least one: 0.875, 0.5, 1.0

   procedure End_Part (Self : in out Store; Result : out Part)
   with Pre  => Is_Writing (Self),
        Post => not Is_Writing (Self) and then Is_Kept (Self, Result);

   procedure Keep
     (Self : in out Store; Value : String; Bound : Part_Bound;
      Result : out Part)
   with Pre  => not Is_Writing (Self),
        Post => not Is_Writing (Self) and then Is_Kept (Self, Result)
                and then Length (Result) <= Bound;
   --  Value as one part: Start_Part, Add, End_Part

   function Is_Kept (Self : Store; Kept : Part) return Boolean;
   --  Kept is empty or lies within the bytes Self holds

   function Is_Empty (Kept : Part) return Boolean is (Kept.Last < Kept.First);

   function Length (Kept : Part) return Natural is
     (if Kept.Last < Kept.First then 0 else Kept.Last - Kept.First + 1);

   function Text_Of (Self : Store; Kept : Part) return String
   with Pre => Is_Kept (Self, Kept);
   --  A copy of the part's text

   procedure Read
     (Self    : Store;
      Process : not null access procedure (Bytes : String));
   --  Call Process once with the bytes Self keeps (1 .. Used (Self)), where
   --  they stand: for a writer that copies many parts, Bytes (Part.First ..
   --  Part.Last) is each part without a copy

private

   type Store (Capacity : Natural) is limited record
      Data       : String (1 .. Capacity);
      Last       : Natural := 0;
      --  Data (1 .. Last) holds the texts kept since the last Clear
      Writing    : Boolean := False;
      Part_First : Positive := 1;
      --  The part being written starts at Data (Part_First)
      Limit      : Natural := 0;
      --  The part being written ends at Data (Limit) at the latest:
      --  never past Capacity (Start_Part clamps it)
      Cut        : Boolean := False;
      --  The part being written was cut
      Any_Cut    : Boolean := False;
   end record;

   function Is_Within_Capacity (Self : Store) return Boolean is
     (Self.Limit <= Self.Capacity and then Self.Last <= Self.Capacity);

   function Used (Self : Store) return Natural is (Self.Last);

   function Is_Writing (Self : Store) return Boolean is (Self.Writing);

   function Was_Cut (Self : Store) return Boolean is (Self.Any_Cut);

   function Is_Kept (Self : Store; Kept : Part) return Boolean is
     (Kept.Last < Kept.First or else Kept.Last <= Self.Last);

   function Text_Of (Self : Store; Kept : Part) return String is
     (Self.Data (Kept.First .. Kept.Last));


   function Prefix_Length (Text : String; Max_Bytes : Natural) return Natural
     renames Utf8.Prefix_Length;

end Organs.Texts;
