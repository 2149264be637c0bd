with Json_Bytes;
with Utf8;

package body Input_Guard with SPARK_Mode => On is

   subtype Byte is Natural range 0 .. 255;

   function Code (C : Character) return Byte is (Character'Pos (C))
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
            Length : constant Utf8.Sequence_Size :=
              (if Code (C) < 16#80# then 1
               else Utf8.Sequence_Length (Line, Index));
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

end Input_Guard;
