with Organs.Word_Search;

package body Organs.Morag is

   pragma Compile_Time_Error
     (Recall_Count'Last > Organs.Word_Search.Max_Texts,
      "one recall must tell every kept turn apart");

   pragma Compile_Time_Error
     (Max_Depth * Max_Recall_Bytes > Organs.Word_Search.Max_Text_Bytes
                                     - Organs.Word_Search.Max_Texts,
      "one recall must index every kept byte");

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
