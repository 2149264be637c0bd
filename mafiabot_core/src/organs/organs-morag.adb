with Input_Guard;

package body Organs.Morag is

   function Excerpt (Stub : Fixture; Input : String) return String is
     (Input (Input'First .. Input'First - 1
             + Input_Guard.Utf8_Prefix_Length (Input, Stub.Excerpt_Bytes)));

   --  Whether some word of three or more bytes of Left occurs in Right,
   --  both compared with ASCII folding
   function Shares_Word (Left, Right : String) return Boolean is
      --  Whether Left (First .. Last) stands in Right from At_Byte on
      --  (At_Byte - 1 <= Right'Last - (Last - First + 1), as the caller
      --  sees to)
      function Stands_At (First, Last, At_Byte : Positive) return Boolean is
        (for all K in First .. Last =>
           Folded (Right (At_Byte + (K - First))) = Folded (Left (K)));

      Start : Natural := 0;
   begin
      for Index in Left'First .. Left'Last + 1 loop
         if Index <= Left'Last and then Is_Word_Byte (Left (Index)) then
            if Start = 0 then
               Start := Index;
            end if;
         elsif Start /= 0 then
            if Index - Start >= 3
              and then (for some At_Byte in
                          Right'First .. Right'Last - (Index - Start) + 1 =>
                          Stands_At (Start, Index - 1, At_Byte))
            then
               return True;
            end if;
            Start := 0;
         end if;
      end loop;
      return False;
   end Shares_Word;

   function Recall (Self : Memory; Input : String) return String is
      Last  : Natural := Length (Self.Kept);
      First : Natural;
   begin
      if Self.Count = 0 then
         return "";
      end if;
      for Age in reverse 1 .. Self.Count loop
         First := Last - Natural (Self.Sizes (Age)) + 1;
         declare
            Excerpt : constant String := Slice (Self.Kept, First, Last);
         begin
            if Shares_Word (Input, Excerpt) then
               return Excerpt;
            end if;
         end;
         Last := First - 1;
      end loop;
      return Slice (Self.Kept,
                    Length (Self.Kept) - Natural (Self.Sizes (Self.Count)) + 1,
                    Length (Self.Kept));
   end Recall;

   procedure Remember (Self : in out Memory; Stub : Fixture; Input : String) is
      Kept    : constant String := Excerpt (Stub, Input);
      Dropped : Natural := 0;
   begin
      while Self.Count >= Stub.Recall_Depth loop
         Dropped := Dropped + Natural (Self.Sizes (1));
         Self.Sizes (1 .. Self.Count - 1) := Self.Sizes (2 .. Self.Count);
         Self.Count := Self.Count - 1;
      end loop;
      --  Rebuilt at its exact size: Append would leave growth room in
      --  every one of possibly 100,000 sessions.
      Self.Kept := To_Unbounded_String
        (Slice (Self.Kept, Dropped + 1, Length (Self.Kept)) & Kept);
      Self.Count := Self.Count + 1;
      Self.Sizes (Self.Count) := Excerpt_Length (Kept'Length);
   end Remember;

end Organs.Morag;
