package body Json_Text is

   use Ada.Strings.Unbounded;

   Hex : constant String := "0123456789abcdef";

   --  Separate this value from the previous item of the same container.
   procedure Before_Value (Self : in out Builder) is
   begin
      if Self.After_Key then
         Self.After_Key := False;
      elsif Self.Level > 0 then
         if Self.Has_Items (Self.Level) then
            Append (Self.Buffer, ',');
         end if;
         Self.Has_Items (Self.Level) := True;
      end if;
   end Before_Value;

   procedure Open (Self : in out Builder; Bracket : Character) is
   begin
      Before_Value (Self);
      if Self.Level = Max_Nesting then
         raise Nesting_Overflow;
      end if;
      Self.Level := Self.Level + 1;
      Self.Has_Items (Self.Level) := False;
      Append (Self.Buffer, Bracket);
   end Open;

   procedure Close (Self : in out Builder; Bracket : Character) is
   begin
      Append (Self.Buffer, Bracket);
      Self.Level := Self.Level - 1;
   end Close;

   procedure Start_Object (Self : in out Builder) is
   begin
      Open (Self, '{');
   end Start_Object;

   procedure End_Object (Self : in out Builder) is
   begin
      Close (Self, '}');
   end End_Object;

   procedure Start_Array (Self : in out Builder) is
   begin
      Open (Self, '[');
   end Start_Array;

   procedure End_Array (Self : in out Builder) is
   begin
      Close (Self, ']');
   end End_Array;

   procedure Append_Quoted (Buffer : in out Unbounded_String; Value : String)
   is
      Run_Start : Positive := Value'First;

      --  Copy the bytes that need no escape in one append, not one by one.
      procedure Flush_Run (Before : Natural) is
      begin
         if Before >= Run_Start then
            Append (Buffer, Value (Run_Start .. Before));
         end if;
      end Flush_Run;
   begin
      Append (Buffer, '"');
      for Index in Value'Range loop
         declare
            C : constant Character := Value (Index);
            Escape : constant String :=
              (case C is
                  when '"' => "\""",
                  when '\' => "\\",
                  when ASCII.LF => "\n",
                  when ASCII.CR => "\r",
                  when ASCII.HT => "\t",
                  when ASCII.BS => "\b",
                  when ASCII.FF => "\f",
                  when ASCII.NUL .. ASCII.BEL | ASCII.VT | ASCII.SO .. ASCII.US
                     => "\u00"
                        & Hex (Character'Pos (C) / 16 + 1)
                        & Hex (Character'Pos (C) mod 16 + 1),
                  when others => "");
         begin
            if Escape'Length > 0 then
               Flush_Run (Index - 1);
               Append (Buffer, Escape);
               Run_Start := Index + 1;
            end if;
         end;
      end loop;
      Flush_Run (Value'Last);
      Append (Buffer, '"');
   end Append_Quoted;

   function Quoted (Value : String) return String is
      Buffer : Unbounded_String;
   begin
      Append_Quoted (Buffer, Value);
      return To_String (Buffer);
   end Quoted;

   procedure Key (Self : in out Builder; Name : String) is
   begin
      Before_Value (Self);
      Append_Quoted (Self.Buffer, Name);
      Append (Self.Buffer, ':');
      Self.After_Key := True;
   end Key;

   procedure Text (Self : in out Builder; Value : String) is
   begin
      Before_Value (Self);
      Append_Quoted (Self.Buffer, Value);
   end Text;

   procedure Raw (Self : in out Builder; Json : String) is
   begin
      Before_Value (Self);
      Append (Self.Buffer, Json);
   end Raw;

   procedure Int (Self : in out Builder; Value : Long_Long_Integer) is
      Image : constant String := Long_Long_Integer'Image (Value);
   begin
      Raw (Self, (if Value < 0 then Image else Image (Image'First + 1 .. Image'Last)));
   end Int;

   procedure Bool (Self : in out Builder; Value : Boolean) is
   begin
      Raw (Self, (if Value then "true" else "false"));
   end Bool;

   procedure Null_Value (Self : in out Builder) is
   begin
      Raw (Self, "null");
   end Null_Value;

   function Fraction_Image (Value : Millis) return String is
      Digits_3 : constant String :=
        [1 => Character'Val (Character'Pos ('0') + Value / 100 mod 10),
         2 => Character'Val (Character'Pos ('0') + Value / 10 mod 10),
         3 => Character'Val (Character'Pos ('0') + Value mod 10)];
      Last : Natural := 3;
   begin
      if Value = 1000 then
         return "1.0";
      end if;
      while Last > 1 and then Digits_3 (Last) = '0' loop
         Last := Last - 1;
      end loop;
      return "0." & Digits_3 (1 .. Last);
   end Fraction_Image;

   procedure Fraction (Self : in out Builder; Value : Millis) is
   begin
      Raw (Self, Fraction_Image (Value));
   end Fraction;

   procedure Text_Field (Self : in out Builder; Name, Value : String) is
   begin
      Key (Self, Name);
      Text (Self, Value);
   end Text_Field;

   procedure Int_Field
     (Self : in out Builder; Name : String; Value : Long_Long_Integer) is
   begin
      Key (Self, Name);
      Int (Self, Value);
   end Int_Field;

   procedure Bool_Field (Self : in out Builder; Name : String; Value : Boolean)
   is
   begin
      Key (Self, Name);
      Bool (Self, Value);
   end Bool_Field;

   procedure Raw_Field (Self : in out Builder; Name, Json : String) is
   begin
      Key (Self, Name);
      Raw (Self, Json);
   end Raw_Field;

   function Image (Self : Builder) return String is
     (To_String (Self.Buffer));

   procedure Move_To
     (Self : in out Builder; Target : out Unbounded_String) is
   begin
      Target := Self.Buffer;
      Self.Buffer := Null_Unbounded_String;
      Self.Level := 0;
      Self.After_Key := False;
   end Move_To;

end Json_Text;
