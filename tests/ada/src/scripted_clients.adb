with Ada.Strings.Fixed;
with Organs.Model_Intender;

package body Scripted_Clients is

   function Holds (Text, Part : String) return Boolean is
     (Ada.Strings.Fixed.Index (Text, Part) > 0);

   overriding procedure Send (Self : in out Client; Message : String) is
      Line : constant String := Message (Message'First .. Message'Last - 1);
   begin
      Self.Sent.Append (Line);
      if Holds (Line, """method"":""sampling/createMessage""") then
         Self.Asked := Self.Asked + 1;
         declare
            Id_At : constant Positive :=
              Ada.Strings.Fixed.Index (Line, """id"":") + 5;
            Id_End : constant Positive :=
              Ada.Strings.Fixed.Index (Line (Id_At .. Line'Last), ",") - 1;
         begin
            if Self.Asked = 1 then
               for Before of Self.Before_Answer loop
                  Self.Script.Append (Before);
               end loop;
            end if;
            Self.Script.Append
              ("{""jsonrpc"":""2.0"",""id"":" & Line (Id_At .. Id_End)
               & ",""result"":{""role"":""assistant"",""model"":""scripted"","
               & """content"":{""type"":""text"",""text"":"""
               & (if Holds (Line, Organs.Model_Intender.System_Prompt)
                  then Ada.Strings.Unbounded.To_String (Self.Intent_Answer)
                  else Answer_Text) & """}}}");
         end;
      end if;
   end Send;

   overriding procedure Await_Line
     (Self     : in out Client;
      Deadline : Monotonic.Instant;
      On_Line  : not null access procedure (Line : String);
      Outcome  : out Client_Channels.Wait_Outcome;
      Overflow : out Natural)
   is
      pragma Unreferenced (Deadline);
   begin
      Overflow := 0;
      if Self.Script.Is_Empty then
         Outcome := Client_Channels.Timed_Out;
         return;
      end if;
      declare
         Line : constant String := Self.Script.First_Element;
      begin
         Self.Script.Delete_First;
         Outcome := Client_Channels.Got_Line;
         On_Line (Line);
      end;
   end Await_Line;

   function Count_Of (Self : Client; Part : String) return Natural is
      Count : Natural := 0;
   begin
      for Line of Self.Sent loop
         if Holds (Line, Part) then
            Count := Count + 1;
         end if;
      end loop;
      return Count;
   end Count_Of;

   function First_Holding (Self : Client; Part : String) return Natural is
   begin
      for Index in 1 .. Natural (Self.Sent.Length) loop
         if Holds (Self.Sent (Index), Part) then
            return Index;
         end if;
      end loop;
      return 0;
   end First_Holding;

end Scripted_Clients;
