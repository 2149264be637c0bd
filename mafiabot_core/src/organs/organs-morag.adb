with Interfaces;
with Organs.Word_Search;

package body Organs.Morag is

   use type Interfaces.Unsigned_32;

   pragma Compile_Time_Error
     (Recall_Count'Last > Organs.Word_Search.Max_Texts,
      "one recall must tell every kept turn apart");

   pragma Compile_Time_Error
     (Max_Depth * Max_Recall_Bytes > Organs.Word_Search.Max_Text_Bytes
                                     - Organs.Word_Search.Max_Texts,
      "one recall must index every kept byte");

   --  Value's decimal digits at Text (Last + 1 ..), Last moved past them
   procedure Put_Digits (Text : in out String; Last : in out Natural;
                         Value : Natural)
   with Inline,
        Pre => Last in Text'First - 1 .. Text'Last - Max_Decimal_Bytes
   is
      --  Within Text by the precondition's room, Value's digits being at
      --  most Max_Decimal_Bytes; each digit a character
      pragma Suppress (Index_Check);
      pragma Suppress (Overflow_Check);
      pragma Suppress (Range_Check);
      Width : constant Positive :=
        (if Value < 10 then 1
         elsif Value < 100 then 2
         elsif Value < 1_000 then 3
         elsif Value < 10_000 then 4
         elsif Value < 100_000 then 5
         elsif Value < 1_000_000 then 6
         elsif Value < 10_000_000 then 7
         elsif Value < 100_000_000 then 8
         elsif Value < 1_000_000_000 then 9
         else 10);
      Rest  : Interfaces.Unsigned_32 := Interfaces.Unsigned_32 (Value);
      --  Unsigned: a division by ten is then a multiplication and a shift,
      --  with none of a signed one's corrections
   begin
      for Place in reverse Last + 1 .. Last + Width loop
         Text (Place) := Character'Val (Character'Pos ('0') + Rest mod 10);
         Rest := Rest / 10;
      end loop;
      Last := Last + Width;
   end Put_Digits;

   pragma Compile_Time_Error
     (Natural'Last >= 10_000_000_000, "Put_Digits' widths cover a Natural");

   procedure Put_Decimal (Text : in out String; Last : in out Natural;
                          Value : Natural) is
   begin
      Put_Digits (Text, Last, Value);
   end Put_Decimal;

   procedure Put_Score (Text : in out String; Last : in out Natural;
                        Score : Score_Thousandths)
   is
      --  Within Text by the precondition's room, as Put_Digits
      pragma Suppress (Index_Check);
      pragma Suppress (Overflow_Check);
      pragma Suppress (Range_Check);
      Whole : constant Interfaces.Unsigned_32 :=
        Interfaces.Unsigned_32 (Score);
      --  Unsigned, as in Put_Digits
      Part  : constant Interfaces.Unsigned_32 := Whole mod 1000;
   begin
      Put_Digits (Text, Last, Natural (Whole / 1000));
      Text (Last + 1) := '.';
      Text (Last + 2) := Character'Val (Character'Pos ('0') + Part / 100);
      Text (Last + 3) := Character'Val (Character'Pos ('0') + Part / 10 mod 10);
      Text (Last + 4) := Character'Val (Character'Pos ('0') + Part mod 10);
      Last := Last + 4;
   end Put_Score;

   function Latest_Sharing (Held : Memory'Class; Input : String) return String
   is
      Count : constant Natural := Held.Count;
      Ends  : Organs.Word_Search.Text_Ends (1 .. Count);
      Last  : Natural := 0;
      Age   : Natural;
   begin
      if Count = 0 then
         return "";
      end if;
      for Turn in Ends'Range loop
         Last := Last + Held.Excerpt (Turn)'Length;
         Ends (Turn) := Last;
      end loop;
      declare
         Kept : String (1 .. Last);
      begin
         for Turn in Ends'Range loop
            Kept ((if Turn = 1 then 1 else Ends (Turn - 1) + 1) .. Ends (Turn))
              := Held.Excerpt (Turn);
         end loop;
         Age := Organs.Word_Search.Latest_Sharing (Kept, Ends, Input);
         if Age = 0 then
            Age := Count;
         end if;
         return Kept ((if Age = 1 then 1 else Ends (Age - 1) + 1)
                      .. Ends (Age));
      end;
   end Latest_Sharing;

end Organs.Morag;
