with Json_Bytes;

package body Utf8 with SPARK_Mode => On is

   subtype Byte is Natural range 0 .. 255;

   function Code (C : Character) return Byte is (Character'Pos (C))
   with Global => null;

   function Is_Continuation (C : Character) return Boolean is
     (Code (C) in 16#80# .. 16#BF#)
   with Global => null;

   --  The second-byte ranges exclude overlong forms, UTF-16 surrogates and
   --  code points above U+10FFFF (table 3-7 of the Unicode standard).
   function Sequence_Length (Text : String; From : Positive)
     return Sequence_Size
   is
      Lead : constant Byte := Code (Text (From));

      function Has (Offset : Positive) return Boolean is
        (Text'Last - From >= Offset)
      with Global => (Input => (Text, From));

      function Second_In (Low, High : Byte) return Boolean is
        (Has (1) and then Code (Text (From + 1)) in Low .. High)
      with Global => (Input => (Text, From));

      function Tail_Ok (First, Last : Positive) return Boolean is
        (Has (Last)
         and then (for all K in First .. Last =>
                     Is_Continuation (Text (From + K))))
      with Global => (Input => (Text, From)),
           Pre    => First <= Last and then Last < Max_Sequence_Bytes;
   begin
      case Lead is
         when 16#00# .. 16#7F# =>
            return 1;
         when 16#C2# .. 16#DF# =>
            return (if Second_In (16#80#, 16#BF#) then 2 else 0);
         when 16#E0# =>
            return (if Second_In (16#A0#, 16#BF#) and then Tail_Ok (2, 2)
                    then 3 else 0);
         when 16#E1# .. 16#EC# | 16#EE# .. 16#EF# =>
            return (if Second_In (16#80#, 16#BF#) and then Tail_Ok (2, 2)
                    then 3 else 0);
         when 16#ED# =>
            return (if Second_In (16#80#, 16#9F#) and then Tail_Ok (2, 2)
                    then 3 else 0);
         when 16#F0# =>
            return (if Second_In (16#90#, 16#BF#) and then Tail_Ok (2, 3)
                    then 4 else 0);
         when 16#F1# .. 16#F3# =>
            return (if Second_In (16#80#, 16#BF#) and then Tail_Ok (2, 3)
                    then 4 else 0);
         when 16#F4# =>
            return (if Second_In (16#80#, 16#8F#) and then Tail_Ok (2, 3)
                    then 4 else 0);
         when others =>
            return 0;
      end case;
   end Sequence_Length;

   function Is_Valid (Text : String) return Boolean is
      Index : Natural := Text'First;
   begin
      while Index <= Text'Last loop
         --  Every byte before Index is part of a whole sequence: the loop
         --  only steps over sequences Sequence_Length found
         pragma Loop_Invariant (Index in Text'Range);
         declare
            Length : constant Sequence_Size := Sequence_Length (Text, Index);
         begin
            if Length = 0 then
               return False;
            end if;
            exit when Text'Last - Index < Length;
            Index := Index + Length;
         end;
      end loop;
      return True;
   end Is_Valid;

   function Prefix_Length (Text : String; Max_Bytes : Natural)
     return Natural
   is
      Length : constant Natural := Text'Length;
      --  A Natural, so the invariants' sums are machine arithmetic (with
      --  -gnato13, a sum involving 'Length is computed in bignums)
      Taken  : Natural := 0;
   begin
      --  ASCII bytes are whole characters: most texts are taken here,
      --  eight at a time while eight remain
      while Length - Taken >= 8 and then Max_Bytes - Taken >= 8
        and then Json_Bytes.Is_Ascii_Run
          (Text (Text'First + Taken .. Text'First + Taken + 7))
      loop
         --  The loop's test leaves eight bytes of room both ways
         pragma Loop_Invariant
           (Taken + 8 <= Max_Bytes and then Taken + 8 <= Length);
         Taken := Taken + 8;
      end loop;
      while Taken < Length and then Taken < Max_Bytes
        and then Code (Text (Text'First + Taken)) < 16#80#
      loop
         --  Likewise, one byte
         pragma Loop_Invariant (Taken < Max_Bytes and then Taken < Length);
         Taken := Taken + 1;
      end loop;
      while Taken < Length loop
         --  A sequence is taken only when it fits within Max_Bytes, and
         --  Sequence_Length never reaches past the text
         pragma Loop_Invariant (Taken <= Max_Bytes and then Taken < Length);
         declare
            Lead   : constant Character := Text (Text'First + Taken);
            Length : constant Sequence_Size :=
              (if Code (Lead) < 16#80# then 1
               else Sequence_Length (Text, Text'First + Taken));
         begin
            --  A broken sequence ends the prefix: it is never cut into.
            exit when Length = 0 or else Length > Max_Bytes - Taken;
            Taken := Taken + Length;
         end;
      end loop;
      return Taken;
   end Prefix_Length;

end Utf8;
