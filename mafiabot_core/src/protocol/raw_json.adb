package body Raw_Json is

   function Is_Blank (C : Character) return Boolean is
     (C in ' ' | ASCII.HT | ASCII.LF | ASCII.CR);

   function Member_Value (Document : String; Name : String) return Span is
      Found : Span;
      Index : Natural := Document'First;

      procedure Skip_Blanks is
      begin
         while Index <= Document'Last and then Is_Blank (Document (Index))
         loop
            Index := Index + 1;
         end loop;
      end Skip_Blanks;

      --  Index is on an opening quote; leave it just past the closing one.
      procedure Skip_String is
      begin
         Index := Index + 1;
         while Index <= Document'Last and then Document (Index) /= '"' loop
            Index := Index + (if Document (Index) = '\' then 2 else 1);
         end loop;
         Index := Index + 1;
      end Skip_String;

      procedure Skip_Value is
         Depth : Natural := 0;
      begin
         loop
            exit when Index > Document'Last;
            case Document (Index) is
               when '"' =>
                  Skip_String;
               when '[' | '{' =>
                  Depth := Depth + 1;
                  Index := Index + 1;
               when ']' | '}' =>
                  exit when Depth = 0;
                  Depth := Depth - 1;
                  Index := Index + 1;
               when ',' =>
                  exit when Depth = 0;
                  Index := Index + 1;
               when others =>
                  exit when Depth = 0 and then Is_Blank (Document (Index));
                  Index := Index + 1;
            end case;
            exit when Depth = 0
              and then Index > Document'First
              and then Document (Index - 1) in '"' | ']' | '}';
         end loop;
      end Skip_Value;

      --  Whether the key literal Document (First .. Last), quotes excluded,
      --  names Name.  Escapes in keys are rare but legal ("\u0069d" is
      --  "id"), so ASCII escapes are decoded before comparing.
      function Names (First, Last : Positive) return Boolean is
         Matched : Natural := 0;
         Cursor  : Positive := First;
         Decoded : Character;
      begin
         while Cursor <= Last loop
            if Document (Cursor) = '\' and then Cursor < Last then
               if Document (Cursor + 1) = 'u' and then Last - Cursor >= 5 then
                  declare
                     Unit : constant Integer :=
                       Integer'Value ("16#" & Document (Cursor + 2 .. Cursor + 5)
                                      & "#");
                  begin
                     if Unit > 127 then
                        return False;
                     end if;
                     Decoded := Character'Val (Unit);
                     Cursor := Cursor + 6;
                  end;
               else
                  Decoded := Document (Cursor + 1);
                  Cursor := Cursor + 2;
               end if;
            else
               Decoded := Document (Cursor);
               Cursor := Cursor + 1;
            end if;
            Matched := Matched + 1;
            if Matched > Name'Length
              or else Name (Name'First + Matched - 1) /= Decoded
            then
               return False;
            end if;
         end loop;
         return Matched = Name'Length;
      end Names;

   begin
      Skip_Blanks;
      if Index > Document'Last or else Document (Index) /= '{' then
         return Found;
      end if;
      Index := Index + 1;
      loop
         Skip_Blanks;
         exit when Index > Document'Last or else Document (Index) /= '"';
         declare
            Key_First : constant Positive := Index + 1;
            Key_Last  : Natural;
         begin
            Skip_String;
            Key_Last := Index - 2;
            Skip_Blanks;
            Index := Index + 1;  --  the colon
            Skip_Blanks;
            declare
               Value_First : constant Positive := Index;
            begin
               Skip_Value;
               if Key_Last < Key_First then
                  if Name'Length = 0 then
                     Found := (Value_First, Index - 1);
                  end if;
               elsif Names (Key_First, Key_Last) then
                  Found := (Value_First, Index - 1);
               end if;
            end;
         end;
         Skip_Blanks;
         exit when Index > Document'Last or else Document (Index) /= ',';
         Index := Index + 1;
      end loop;
      return Found;
   end Member_Value;

end Raw_Json;
