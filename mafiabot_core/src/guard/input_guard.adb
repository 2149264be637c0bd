with Json_Bytes;

package body Input_Guard with SPARK_Mode => On is

   subtype Byte is Natural range 0 .. 255;

   function Code (C : Character) return Byte is (Character'Pos (C))
   with Global => null;

   function Is_Continuation (C : Character) return Boolean is
     (Code (C) in 16#80# .. 16#BF#)
   with Global => null;

   function Is_Plain_Text (C : Character) return Boolean is
     (Code (C) in 16#20# .. 16#7F# and then C not in '"' | '\')
   with Global => null;
   --  A byte a JSON string holds as it is, one character long

   type Byte_Set is array (Character) of Boolean;

   Passive_Between_Texts : constant Byte_Set :=
     [for C in Character =>
        Code (C) < 16#80# and then C not in '"' | '[' | ']' | '{' | '}' | ','];
   --  Bytes outside strings that change no state of the scan: blanks,
   --  colons, numbers, literals (and stray ASCII, which the parser refuses)

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

   Hex_Digits : constant := 4;
   --  A \uXXXX escape's digits: one UTF-16 code unit

   Escape_Bytes : constant := 2 + Hex_Digits;
   --  The backslash, the u and the digits

   Pair_Bytes : constant := 2 * Escape_Bytes;
   --  A surrogate pair: \uD83D\uDE00

   Max_Unit : constant := 16 ** Hex_Digits - 1;

   pragma Compile_Time_Error
     (Max_Unit < 16#DFFF#, "an escape must reach the surrogates");

   subtype Hex_Digit_Value is Integer range -1 .. 15;
   --  A hex digit's value, -1 for a byte that is none

   subtype Escaped_Unit is Integer range -1 .. Max_Unit;
   --  An escape's code unit, -1 when its digits are not all there

   function Hex_Value (C : Character) return Hex_Digit_Value is
     (case C is
         when '0' .. '9' => Character'Pos (C) - Character'Pos ('0'),
         when 'a' .. 'f' => Character'Pos (C) - Character'Pos ('a') + 10,
         when 'A' .. 'F' => Character'Pos (C) - Character'Pos ('A') + 10,
         when others => -1)
   with Global => null;

   function Power_Of_16 (Exponent : Natural) return Positive is
     (case Exponent is
         when 0 => 1, when 1 => 16#10#, when 2 => 16#100#,
         when 3 => 16#1000#, when others => 16#1_0000#)
   with Ghost, Global => null, Pre => Exponent <= Hex_Digits;
   --  Spelt out for the prover, which handles no variable exponent

   --  The code unit of a \uXXXX escape whose 'u' is at At_U, or -1 when the
   --  four hex digits are not all there (the parser reports that itself).
   function Escape_Unit (Text : String; At_U : Positive) return Escaped_Unit
   with
     Global => null,
     Pre    => At_U in Text'Range and then Text'Last < Integer'Last
   is
      Unit : Natural := 0;
   begin
      if Text'Last - At_U < Hex_Digits then
         return -1;
      end if;
      for K in 1 .. Hex_Digits loop
         --  Unit is the value of the K - 1 digits read, so below 16 to
         --  that power: one more digit (below 16) multiplies the bound by
         --  16, which is the invariant at K + 1, and at K = Hex_Digits + 1
         --  it is Max_Unit + 1
         pragma Loop_Invariant (Unit < Power_Of_16 (K - 1));
         declare
            Digit : constant Hex_Digit_Value := Hex_Value (Text (At_U + K));
         begin
            if Digit < 0 then
               return -1;
            end if;
            Unit := Unit * 16 + Digit;
         end;
      end loop;
      return Unit;
   end Escape_Unit;

   function Inspect (Line : String; Within : Limits) return Verdict is
      Depth    : Natural := 0;
      Elements : Natural := 0;
      Index    : Natural := Line'First;
      In_Text  : Boolean := False;

      function Reject (Kind : Rejection; At_Byte : Positive) return Verdict
      is ((Kind => Kind, Offset => At_Byte))
      with Global => (Input => Line), Pre => At_Byte in Line'Range;
   begin
      while Index <= Line'Last loop
         --  Index only grows, by at most what the loop's exit test leaves
         --  in the line; Depth and Elements grow only after a test that
         --  they are below their limits, else the line is rejected
         pragma Loop_Invariant (Index in Line'Range);
         pragma Loop_Invariant (Depth <= Within.Max_Depth);
         pragma Loop_Invariant (Elements <= Within.Max_Elements);
         --  Bytes that change no state, most of a line, are passed over
         --  without the decoder: plain ASCII within a string, eight bytes at
         --  a time where it runs long, and blanks, colons and numbers
         --  between strings.  The last byte always takes the full path.
         if In_Text then
            while Line'Last - Index > 8
              and then Json_Bytes.Is_Plain_Ascii_Run
                (Line (Index .. Index + 7))
            loop
               pragma Loop_Invariant (Index in Line'Range);
               Index := Index + 8;
            end loop;
            while Index < Line'Last and then Is_Plain_Text (Line (Index)) loop
               pragma Loop_Invariant (Index in Line'Range);
               Index := Index + 1;
            end loop;
         else
            while Index < Line'Last
              and then Passive_Between_Texts (Line (Index))
            loop
               pragma Loop_Invariant (Index in Line'Range);
               Index := Index + 1;
            end loop;
         end if;
         declare
            C      : constant Character := Line (Index);
            --  ASCII, nearly every byte of a protocol line, is a sequence
            --  of one: only the other bytes need the full decoder.
            Length : constant Sequence_Size :=
              (if Code (C) < 16#80# then 1 else Sequence_Length (Line, Index));
         begin
            if Length = 0 then
               return Reject (Invalid_Utf8, Index);
            end if;

            if In_Text then
               if Code (C) < 16#20# then
                  return Reject (Control_In_String, Index);
               elsif C = '"' then
                  In_Text := False;
               elsif C = '\' and then Index < Line'Last
                 and then Code (Line (Index + 1)) < 16#80#
               then
                  if Line (Index + 1) = 'u' then
                     declare
                        Unit : constant Integer :=
                          Escape_Unit (Line, Index + 1);
                     begin
                        if Unit in 16#DC00# .. 16#DFFF# then
                           return Reject (Lone_Surrogate, Index);
                        elsif Unit in 16#D800# .. 16#DBFF# then
                           --  A high half must be followed at once by a
                           --  low half: \uD83D\uDE00.
                           if Line'Last - Index < Pair_Bytes - 1
                             or else Line (Index + Escape_Bytes) /= '\'
                             or else Line (Index + Escape_Bytes + 1) /= 'u'
                             or else Escape_Unit
                                       (Line, Index + Escape_Bytes + 1)
                                       not in 16#DC00# .. 16#DFFF#
                           then
                              return Reject (Lone_Surrogate, Index);
                           end if;
                           Index := Index + Escape_Bytes;
                        end if;
                     end;
                  end if;
                  --  Skip the escaped character so \" does not end the text
                  Index := Index + 1;
               end if;
            else
               case C is
                  when '"' =>
                     In_Text := True;
                  when '[' | '{' =>
                     if Depth = Within.Max_Depth then
                        return Reject (Too_Deep, Index);
                     end if;
                     Depth := Depth + 1;
                     if Elements = Within.Max_Elements then
                        return Reject (Too_Many_Elements, Index);
                     end if;
                     Elements := Elements + 1;
                  when ']' | '}' =>
                     if Depth > 0 then
                        Depth := Depth - 1;
                     end if;
                  when ',' =>
                     if Elements = Within.Max_Elements then
                        return Reject (Too_Many_Elements, Index);
                     end if;
                     Elements := Elements + 1;
                  when others =>
                     null;
               end case;
            end if;

            exit when Line'Last - Index < Length;
            Index := Index + Length;
         end;
      end loop;
      return (Kind => Clean, Offset => 0);
   end Inspect;

   function Is_Valid_Utf8 (Text : String) return Boolean is
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
   end Is_Valid_Utf8;

   function Utf8_Prefix_Length (Text : String; Max_Bytes : Natural)
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
   end Utf8_Prefix_Length;

end Input_Guard;
