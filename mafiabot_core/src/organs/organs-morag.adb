package body Organs.Morag is

   use Ada.Strings.Unbounded;

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

   function Latest_Sharing (Held : Memory; Input : String) return String is
      Last  : Natural := Length (Held.Kept);
      First : Natural;
   begin
      if Held.Count = 0 then
         return "";
      end if;
      for Age in reverse 1 .. Held.Count loop
         First := Last - Natural (Held.Sizes (Age)) + 1;
         declare
            Excerpt : constant String := Slice (Held.Kept, First, Last);
         begin
            if Shares_Word (Input, Excerpt) then
               return Excerpt;
            end if;
         end;
         Last := First - 1;
      end loop;
      return Slice (Held.Kept,
                    Length (Held.Kept) - Natural (Held.Sizes (Held.Count)) + 1,
                    Length (Held.Kept));
   end Latest_Sharing;

   procedure Keep
     (Held : in out Memory; Excerpt : String; Depth : Recall_Count)
   is
      Dropped : Natural := 0;
   begin
      while Held.Count >= Depth loop
         Dropped := Dropped + Natural (Held.Sizes (1));
         Held.Sizes (1 .. Held.Count - 1) := Held.Sizes (2 .. Held.Count);
         Held.Count := Held.Count - 1;
      end loop;
      --  Rebuilt at its exact size: Append would leave growth room in
      --  every one of possibly 100,000 sessions.
      Held.Kept := To_Unbounded_String
        (Slice (Held.Kept, Dropped + 1, Length (Held.Kept)) & Excerpt);
      Held.Count := Held.Count + 1;
      Held.Sizes (Held.Count) := Excerpt_Length (Excerpt'Length);
   end Keep;

end Organs.Morag;
