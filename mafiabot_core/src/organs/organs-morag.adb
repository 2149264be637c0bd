with Input_Guard;
with Organs.Word_Search;

package body Organs.Morag is

   pragma Compile_Time_Error
     (Recall_Count'Last > Organs.Word_Search.Max_Texts,
      "one recall must tell every kept turn apart");

   function Excerpt (Stub : Fixture; Input : String) return String is
     (Input (Input'First .. Input'First - 1
             + Input_Guard.Utf8_Prefix_Length (Input, Stub.Excerpt_Bytes)));

   function Recall (Self : Memory; Input : String) return String is
      Kept : constant String := To_String (Self.Kept);
      Ends : Organs.Word_Search.Text_Ends (1 .. Self.Count);
      Last : Natural := 0;
      Age  : Natural;
   begin
      if Self.Count = 0 then
         return "";
      end if;
      for Turn in Ends'Range loop
         Last := Last + Natural (Self.Sizes (Turn));
         Ends (Turn) := Last;
      end loop;
      Age := Organs.Word_Search.Latest_Sharing (Kept, Ends, Input);
      if Age = 0 then
         Age := Self.Count;
      end if;
      return Kept ((if Age = 1 then 1 else Ends (Age - 1) + 1) .. Ends (Age));
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
