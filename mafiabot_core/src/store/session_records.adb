with Interfaces;
with Organs;
with Organs.Celtic_Cross;

package body Session_Records is

   use Interfaces;

   package Excerpts renames Organs.Morag.Excerpts;

   Empty : constant Session_Table.Session :=
     (Turns => 0, Reservoir => <>, Draws => 0);

   function Explanation (Status : Decode_Status) return String is
     (case Status is
         when Decoded => "decoded",
         when Other_Version =>
           "a session record of another format (this body reads format"
           & Natural'Image (Format_Version) & ")",
         when Malformed => "a malformed session record",
         when Not_Utf8 =>
           "a session record whose recalled text is not UTF-8");

   --  Little-endian words, Width bytes, at Bytes (From ..)
   function Word_At (Bytes : String; From : Positive; Width : Positive)
     return Unsigned_64
   is
      Value : Unsigned_64 := 0;
   begin
      for Offset in reverse 0 .. Width - 1 loop
         Value := Shift_Left (Value, 8)
           or Unsigned_64 (Character'Pos (Bytes (From + Offset)));
      end loop;
      return Value;
   end Word_At;

   function Encoded
     (State  : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory) return String
   is
      Result : String (1 .. Session_Bytes);
      Last   : Natural := 0;

      --  Value as Width little-endian bytes
      procedure Put_Word (Value : Unsigned_64; Width : Positive) with Inline
      is
      begin
         for Index in 1 .. Width loop
            Result (Last + Index) :=
              Character'Val (Shift_Right (Value, 8 * (Index - 1)) and 16#FF#);
         end loop;
         Last := Last + Width;
      end Put_Word;
   begin
      Put_Word (Format_Version, 1);
      Put_Word (Unsigned_64 (State.Turns), 4);
      Put_Word (Unsigned_64 (Organs.To_Millis (State.Reservoir.Level)), 2);
      Put_Word (Boolean'Pos (State.Reservoir.Held), 1);
      Put_Word (Unsigned_64 (State.Draws), 8);
      return Result & Excerpts.Encoded (Memory);
   end Encoded;

   procedure Decode
     (Bytes  : String;
      State  : out Session_Table.Session;
      Memory : out Organs.Morag.Excerpts.Excerpt_Memory;
      Status : out Decode_Status)
   is
      First : constant Positive := Bytes'First;
   begin
      State := Empty;
      Memory := Organs.Morag.Excerpts.Empty;
      if Bytes'Length = 0 then
         Status := Malformed;
         return;
      elsif Character'Pos (Bytes (First)) /= Format_Version then
         Status := Other_Version;
         return;
      elsif Bytes'Length < Fixed_Bytes then
         Status := Malformed;
         return;
      end if;

      declare
         Turns : constant Unsigned_64 := Word_At (Bytes, First + 1, 4);
         Level : constant Unsigned_64 := Word_At (Bytes, First + 5, 2);
         Held  : constant Unsigned_64 := Word_At (Bytes, First + 7, 1);
         Draws : constant Unsigned_64 := Word_At (Bytes, First + 8, 8);
         Kept  : Excerpts.Decode_Status;
         use type Excerpts.Decode_Status;
      begin
         if Turns > Unsigned_64 (Natural'Last)
           or else Level > Unsigned_64 (Organs.Millis'Last)
           or else Held > 1
         then
            Status := Malformed;
            return;
         end if;
         Excerpts.Decode (Bytes (First + Session_Bytes .. Bytes'Last),
                          Natural (Turns), Memory, Kept);
         case Kept is
            when Excerpts.Decoded => null;
            when Excerpts.Malformed =>
               Status := Malformed;
               return;
            when Excerpts.Not_Utf8 =>
               Status := Not_Utf8;
               return;
         end case;
         State :=
           (Turns     => Natural (Turns),
            Reservoir => (Level => Organs.To_Fraction (Organs.Millis (Level)),
                          Held  => Held = 1,
                          Log   => <>),
            --  A budget's log is kept in a table of its own (Session_Store)
            Draws     => Organs.Celtic_Cross.Draw_State (Draws));
         Status := Decoded;
      end;
   end Decode;

end Session_Records;
