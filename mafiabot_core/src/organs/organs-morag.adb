with Organs.Word_Search;

package body Organs.Morag is

   use Ada.Strings.Unbounded;

   pragma Compile_Time_Error
     (Recall_Count'Last > Organs.Word_Search.Max_Texts,
      "one recall must tell every kept turn apart");

   pragma Compile_Time_Error
     (Max_Depth * Max_Recall_Bytes > Organs.Word_Search.Max_Text_Bytes
                                     - Organs.Word_Search.Max_Texts,
      "one recall must index every kept byte");

   function Latest_Sharing (Held : Memory; Input : String) return String is
      Kept : constant String := To_String (Held.Kept);
      Ends : Organs.Word_Search.Text_Ends (1 .. Held.Count);
      Last : Natural := 0;
      Age  : Natural;
   begin
      if Held.Count = 0 then
         return "";
      end if;
      for Turn in Ends'Range loop
         Last := Last + Natural (Held.Sizes (Turn));
         Ends (Turn) := Last;
      end loop;
      Age := Organs.Word_Search.Latest_Sharing (Kept, Ends, Input);
      if Age = 0 then
         Age := Held.Count;
      end if;
      return Kept ((if Age = 1 then 1 else Ends (Age - 1) + 1) .. Ends (Age));
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

   function Kept_Excerpt (Held : Memory; Index : Recall_Count) return String
   is
      First : Positive := 1;
   begin
      for Older in 1 .. Index - 1 loop
         First := First + Natural (Held.Sizes (Older));
      end loop;
      return Slice (Held.Kept, First,
                    First + Natural (Held.Sizes (Index)) - 1);
   end Kept_Excerpt;

end Organs.Morag;
