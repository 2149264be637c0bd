with Ada.Characters.Handling;
with Input_Guard;

package body Organs.Morag is

   function Excerpt (Stub : Fixture; Input : String) return String is
     (Input (Input'First .. Input'First - 1
             + Input_Guard.Utf8_Prefix_Length (Input, Stub.Excerpt_Bytes)));

   function Is_Word_Char (C : Character) return Boolean is
     (Ada.Characters.Handling.Is_Alphanumeric (C) or else C >= Character'Val (128));

   --  Whether some word of three or more bytes of Left occurs in Right.
   function Shares_Word (Left, Right : String) return Boolean is
      Lower_Right : constant String := Ada.Characters.Handling.To_Lower (Right);
      Start       : Natural := 0;
   begin
      for Index in Left'First .. Left'Last + 1 loop
         if Index <= Left'Last and then Is_Word_Char (Left (Index)) then
            if Start = 0 then
               Start := Index;
            end if;
         elsif Start /= 0 then
            if Index - Start >= 3 then
               declare
                  Word : constant String :=
                    Ada.Characters.Handling.To_Lower (Left (Start .. Index - 1));
               begin
                  for At_Byte in Lower_Right'First
                                 .. Lower_Right'Last - Word'Length + 1
                  loop
                     if Lower_Right (At_Byte .. At_Byte + Word'Length - 1)
                        = Word
                     then
                        return True;
                     end if;
                  end loop;
               end;
            end if;
            Start := 0;
         end if;
      end loop;
      return False;
   end Shares_Word;

   function Recall (Self : Memory; Input : String) return String is
      Slot : Natural;
   begin
      if Self.Count = 0 then
         return "";
      end if;
      for Age in 1 .. Self.Count loop
         Slot := (Self.Next - 1 - Age) mod Self.Depth + 1;
         if Shares_Word (Input, To_String (Self.Kept (Slot))) then
            return To_String (Self.Kept (Slot));
         end if;
      end loop;
      return To_String (Self.Kept ((Self.Next - 2) mod Self.Depth + 1));
   end Recall;

   procedure Remember (Self : in out Memory; Stub : Fixture; Input : String) is
   begin
      Self.Depth := Stub.Recall_Depth;
      Self.Kept (Self.Next) := To_Unbounded_String (Excerpt (Stub, Input));
      Self.Next := Self.Next mod Self.Depth + 1;
      Self.Count := Natural'Min (Self.Count + 1, Self.Depth);
   end Remember;

end Organs.Morag;
