with Interfaces;
with Organs;
with Organs.Celtic_Cross;
with Organs.Morag;
with Utf8;

package body Session_Records is

   use Interfaces;

   Excerpt_Header_Bytes : constant := 2;

   Empty : constant Session_Table.Session :=
     (Turns => 0, Reservoir => <>, Draws => 0, Memory => <>);

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

   Most_Bytes : constant :=
     Fixed_Bytes
     + Organs.Morag.Max_Depth
       * (Excerpt_Header_Bytes + Organs.Morag.Max_Recall_Bytes);
   --  The longest record: every excerpt kept, each at its bound

   function Encoded (State : Session_Table.Session) return String is
      Count  : constant Natural := Organs.Morag.Count (State.Memory);
      Result : String (1 .. Most_Bytes);
      --  Filled in place, once: a turn encodes its session every time
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
      Put_Word (Unsigned_64 (Count), 1);
      for Index in 1 .. Count loop
         declare
            Kept : constant String :=
              Organs.Morag.Kept_Excerpt (State.Memory, Index);
         begin
            Put_Word (Kept'Length, Excerpt_Header_Bytes);
            Result (Last + 1 .. Last + Kept'Length) := Kept;
            Last := Last + Kept'Length;
         end;
      end loop;
      return Result (1 .. Last);
   end Encoded;

   procedure Decode
     (Bytes  : String;
      State  : out Session_Table.Session;
      Status : out Decode_Status)
   is
      First : constant Positive := Bytes'First;
   begin
      State := Empty;
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
         Turns  : constant Unsigned_64 := Word_At (Bytes, First + 1, 4);
         Level  : constant Unsigned_64 := Word_At (Bytes, First + 5, 2);
         Held   : constant Unsigned_64 := Word_At (Bytes, First + 7, 1);
         Draws  : constant Unsigned_64 := Word_At (Bytes, First + 8, 8);
         Count  : constant Unsigned_64 := Word_At (Bytes, First + 16, 1);
         At_Byte : Natural := First + Fixed_Bytes;
      begin
         if Turns > Unsigned_64 (Natural'Last)
           or else Level > Unsigned_64 (Organs.Millis'Last)
           or else Held > 1
           or else Count > Organs.Morag.Max_Depth
         then
            Status := Malformed;
            return;
         end if;
         --  Decoded into State itself (a session's memory is not copied
         --  again), which is emptied again if the bytes turn out malformed
         State.Turns := Natural (Turns);
         State.Reservoir :=
           (Level => Organs.To_Fraction (Organs.Millis (Level)),
            Held  => Held = 1,
            Log   => <>);
         --  A budget's log is kept in a table of its own (Session_Store)
         State.Draws := Organs.Celtic_Cross.Draw_State (Draws);
         for Excerpt in 1 .. Natural (Count) loop
            if Bytes'Last - At_Byte + 1 < Excerpt_Header_Bytes then
               State := Empty;
               Status := Malformed;
               return;
            end if;
            declare
               Length : constant Unsigned_64 :=
                 Word_At (Bytes, At_Byte, Excerpt_Header_Bytes);
               Start  : constant Positive := At_Byte + Excerpt_Header_Bytes;
            begin
               if Length > Organs.Morag.Max_Recall_Bytes
                 or else Unsigned_64 (Bytes'Last - Start + 1) < Length
               then
                  State := Empty;
                  Status := Malformed;
                  return;
               end if;
               declare
                  Excerpt : String renames
                    Bytes (Start .. Start + Natural (Length) - 1);
               begin
                  if not Utf8.Is_Valid (Excerpt) then
                     State := Empty;
                     Status := Not_Utf8;
                     return;
                  end if;
                  Organs.Morag.Keep (State.Memory, Excerpt,
                                     Organs.Morag.Max_Depth);
               end;
               At_Byte := Start + Natural (Length);
            end;
         end loop;
         if At_Byte /= Bytes'Last + 1 then
            State := Empty;
            Status := Malformed;
            return;
         end if;
         Status := Decoded;
      end;
   end Decode;

end Session_Records;
