with Thousandths;

package body Organs.Texts is

   procedure Clear (Self : in out Store) is
   begin
      Self.Last := 0;
      Self.Writing := False;
      Self.Any_Cut := False;
   end Clear;

   procedure Start_Part (Self : in out Store; Bound : Part_Bound) is
   begin
      Self.Writing := True;
      Self.Part_First := Self.Last + 1;
      Self.Limit := Self.Last + Natural'Min (Bound, Self.Capacity - Self.Last);
      Self.Cut := False;
   end Start_Part;

   --  The piece that passes the part's limit: the part is cut, on a
   --  character boundary, to what leaves room for the mark within the
   --  limit (backing off what was written before, if need be), the mark
   --  ends it, and it takes nothing more
   procedure Add_Cut (Self : in out Store; Piece : String)
   with No_Inline
   is
      Room_Before_Mark : constant Integer :=
        Self.Limit - Self.Part_First + 1 - Cut_Mark'Length;
      --  Negative only for a part clamped to a store that ran out of room
      Written : constant Natural := Self.Last - Self.Part_First + 1;
      Taken   : Natural := 0;
   begin
      if Self.Cut then
         return;
      end if;
      if Room_Before_Mark < 0 then
         Self.Last := Self.Part_First - 1;
      elsif Written > Room_Before_Mark then
         Self.Last := Self.Part_First - 1
           + Prefix_Length (Self.Data (Self.Part_First .. Self.Last),
                            Room_Before_Mark);
      else
         Taken := Prefix_Length (Piece, Room_Before_Mark - Written);
         Self.Data (Self.Last + 1 .. Self.Last + Taken) :=
           Piece (Piece'First .. Piece'First + Taken - 1);
         Self.Last := Self.Last + Taken;
      end if;
      if Room_Before_Mark >= 0 then
         Self.Data (Self.Last + 1 .. Self.Last + Cut_Mark'Length) := Cut_Mark;
         Self.Last := Self.Last + Cut_Mark'Length;
      end if;
      Self.Cut := True;
      Self.Any_Cut := True;
   end Add_Cut;

   --  Add's work, for this package's own writers too: a call of it from
   --  within the package is no call of a public subprogram, so it neither
   --  evaluates the type's invariant on return nor stands in the way of
   --  inlining (both are the public Add's, once for its caller)
   procedure Add_Piece (Self : in out Store; Piece : String)
   with Inline_Always
   is
      --  The test before the copy is the room the copy needs, and Limit
      --  never passes Capacity (the type's invariant): the checks the copy
      --  would make are that test itself
      pragma Suppress (Index_Check);
      pragma Suppress (Length_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
   begin
      if Piece'Length <= Self.Limit - Self.Last and then not Self.Cut then
         Self.Data (Self.Last + 1 .. Self.Last + Piece'Length) := Piece;
         Self.Last := Self.Last + Piece'Length;
      else
         Add_Cut (Self, Piece);
      end if;
   end Add_Piece;

   procedure Add (Self : in out Store; Piece : String) is
   begin
      Add_Piece (Self, Piece);
   end Add;

   procedure Add_Within
     (Self : in out Store; Piece : String; Bound : Part_Bound) is
   begin
      if Piece'Length <= Bound then
         Add_Piece (Self, Piece);
      else
         Add_Piece (Self, Piece (Piece'First .. Piece'First - 1
                           + Prefix_Length (Piece, Bound - Cut_Mark'Length)));
         Add_Piece (Self, Cut_Mark);
         Self.Any_Cut := True;
      end if;
   end Add_Within;

   procedure Add_Kept (Self : in out Store; Kept : Part) is
   begin
      --  Kept lies before the part being written: the copy never reads
      --  what it writes
      Add_Piece (Self, Self.Data (Kept.First .. Kept.Last));
   end Add_Kept;

   procedure Add_Image (Self : in out Store; Value : Natural) is
      Image : String (1 .. 10);
      First : Positive := Image'Last + 1;
      Rest  : Natural := Value;
   begin
      loop
         First := First - 1;
         Image (First) := Character'Val (Character'Pos ('0') + Rest mod 10);
         Rest := Rest / 10;
         exit when Rest = 0;
      end loop;
      Add_Piece (Self, Image (First .. Image'Last));
   end Add_Image;

   procedure Add_Fraction (Self : in out Store; Value : Fraction) is
      Image : constant Thousandths.Image :=
        Thousandths.Spelled (To_Millis (Value));
   begin
      Add_Piece (Self, Image.Text (1 .. Image.Last));
   end Add_Fraction;

   procedure End_Part (Self : in out Store; Result : out Part) is
   begin
      Result := (First => Self.Part_First, Last => Self.Last);
      Self.Writing := False;
   end End_Part;

   procedure Keep
     (Self : in out Store; Value : String; Bound : Part_Bound;
      Result : out Part) is
   begin
      Start_Part (Self, Bound);
      Add_Piece (Self, Value);
      End_Part (Self, Result);
   end Keep;

   procedure Read
     (Self    : Store;
      Process : not null access procedure (Bytes : String)) is
   begin
      Process (Self.Data (1 .. Self.Last));
   end Read;

end Organs.Texts;
