with Ada.Unchecked_Deallocation;

package body Json_Text is

   Initial_Capacity : constant := 16 * 1024;
   --  Larger than a turn's reply, so most builders never grow

   Hex : constant String := "0123456789abcdef";

   procedure Free is new Ada.Unchecked_Deallocation (String, Text_Access);

   overriding procedure Finalize (Self : in out Builder) is
   begin
      Free (Self.Data);
   end Finalize;

   --  Room for More bytes after Last, found by moving to a buffer twice as
   --  large: kept apart from Reserve, since a builder that has seen its
   --  largest document never comes here again
   procedure Grow (Self : in out Builder; More : Natural) is
   begin
      if Self.Data = null then
         Self.Data := new String (1 .. Natural'Max (Initial_Capacity, More));
         Self.Capacity := Self.Data'Length;
      else
         declare
            Grown : constant Text_Access := new String
              (1 .. Natural'Max (2 * Self.Data'Length, Self.Last + More));
         begin
            Grown (1 .. Self.Last) := Self.Data (1 .. Self.Last);
            Free (Self.Data);
            Self.Data := Grown;
            Self.Capacity := Grown'Length;
         end;
      end if;
   end Grow;

   procedure Reserve (Self : in out Builder; More : Natural) with Inline is
   begin
      --  ">=" rather than ">": a builder never written to (Capacity 0)
      --  gets its buffer even for an empty part; the price is that a part
      --  filling the buffer exactly grows it
      if Self.Last + More >= Self.Capacity then
         Grow (Self, More);
      end if;
   end Reserve;

   procedure Put (Self : in out Builder; Part : String) with Inline is
      --  Reserve has made room for Part, in a buffer it allocates if there
      --  is none (Is_Sound: no buffer is Capacity 0)
      pragma Suppress (Index_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
      pragma Suppress (Length_Check);
      pragma Suppress (Access_Check);
      First : constant Positive := Self.Last + 1;
   begin
      Reserve (Self, Part'Length);
      Self.Data (First .. First + Part'Length - 1) := Part;
      Self.Last := Self.Last + Part'Length;
   end Put;

   procedure Put (Self : in out Builder; C : Character) with Inline is
      pragma Suppress (Index_Check);
      pragma Suppress (Range_Check);
   begin
      Reserve (Self, 1);
      Self.Last := Self.Last + 1;
      Self.Data (Self.Last) := C;
   end Put;

   procedure Reset (Self : in out Builder) is
   begin
      Self.Last := 0;
      Self.Level := 0;
      Self.After_Key := False;
      Self.In_Text := False;
      Self.Hole_Last := 0;
      Self.Pattern := No_Template;
   end Reset;

   --  Separate this value from the previous item of the same container.
   procedure Before_Value (Self : in out Builder) with Inline is
   begin
      if Self.After_Key then
         Self.After_Key := False;
      elsif Self.Level > 0 then
         if Self.Has_Items (Self.Level) then
            Put (Self, ',');
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
      Put (Self, Bracket);
   end Open;

   procedure Close (Self : in out Builder; Bracket : Character) is
   begin
      Put (Self, Bracket);
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

   type Character_Set is array (Character) of Boolean;

   Needs_Escape : constant Character_Set :=
     [ASCII.NUL .. ASCII.US | '"' | '\' => True, others => False];
   --  The bytes a JSON string escapes, looked up one at a time: the set
   --  Json_Bytes tests many at once, spelled as a static table so that it
   --  costs nothing at boot (the Ada tests hold the two to each other)

   function Short_Escape (C : Character) return Character is
     (case C is
         when ASCII.LF => 'n',
         when ASCII.CR => 'r',
         when ASCII.HT => 't',
         when ASCII.BS => 'b',
         when ASCII.FF => 'f',
         when others => C);
   --  The letter after the backslash; C itself for '"' and '\', and for the
   --  control characters that need the \u00XX form

   Chunk_Bytes : constant := 4096;
   --  Escaping reserves room for the worst case (7 bytes a byte) one chunk
   --  at a time, so a long text never makes the buffer seven times its size

   --  Quote Value's characters (no surrounding quotes); Twice, for a builder
   --  Inside_String, quotes the quoted form again: a"b is written a\\\"b.
   --  Most texts of a reply need no escape at all, so the run before the
   --  first byte that does is copied at once.  After it, runs between
   --  escapes are short (a quote every few bytes in JSON text), so bytes
   --  are copied one by one into room reserved for the worst case.
   procedure Put_Escaped
     (Self : in out Builder; Value : String; Twice : Boolean)
   is
      --  Every index below stays within Value or within the room Reserve
      --  made
      pragma Suppress (Index_Check);
      pragma Suppress (Overflow_Check);
      pragma Suppress (Range_Check);
      Clean_Last  : Natural := Value'First - 1;
      Chunk_First : Natural;
   begin
      while Clean_Last + 8 <= Value'Last
        and then Json_Bytes.Is_Plain_Run
          (Value (Clean_Last + 1 .. Clean_Last + 8))
      loop
         Clean_Last := Clean_Last + 8;
      end loop;
      while Clean_Last < Value'Last
        and then not Needs_Escape (Value (Clean_Last + 1))
      loop
         Clean_Last := Clean_Last + 1;
      end loop;
      Put (Self, Value (Value'First .. Clean_Last));
      Chunk_First := Clean_Last + 1;
      while Chunk_First <= Value'Last loop
         declare
            Chunk_Last : constant Natural :=
              Natural'Min (Value'Last, Chunk_First + Chunk_Bytes - 1);
         begin
            Reserve (Self, 7 * (Chunk_Last - Chunk_First + 1));
            declare
               Data     : String renames Self.Data.all;
               Out_Last : Natural := Self.Last;
            begin
               for C of Value (Chunk_First .. Chunk_Last) loop
                  if not Needs_Escape (C) then
                     Out_Last := Out_Last + 1;
                     Data (Out_Last) := C;
                  else
                     declare
                        Short : constant Character := Short_Escape (C);
                     begin
                        --  The escape's own backslash, itself escaped when
                        --  the escape is quoted again
                        Out_Last := Out_Last + 1;
                        Data (Out_Last) := '\';
                        if Twice then
                           Out_Last := Out_Last + 1;
                           Data (Out_Last) := '\';
                        end if;
                        if Short /= C or else C in '"' | '\' then
                           if Twice and then C in '"' | '\' then
                              Out_Last := Out_Last + 1;
                              Data (Out_Last) := '\';
                           end if;
                           Data (Out_Last + 1) := Short;
                           Out_Last := Out_Last + 1;
                        else
                           Data (Out_Last + 1 .. Out_Last + 5) :=
                             "u00" & Hex (Character'Pos (C) / 16 + 1)
                             & Hex (Character'Pos (C) mod 16 + 1);
                           Out_Last := Out_Last + 5;
                        end if;
                     end;
                  end if;
               end loop;
               Self.Last := Out_Last;
            end;
            Chunk_First := Chunk_Last + 1;
         end;
      end loop;
   end Put_Escaped;

   --  Text as a string value's characters, in this builder's form
   procedure Put_Text (Self : in out Builder; Value : String) is
   begin
      Put_Escaped (Self, Value, Twice => Self.Inside_String);
   end Put_Text;

   --  JSON text (already valid, already escaped where it holds strings) in
   --  this builder's form
   procedure Put_Json (Self : in out Builder; Json : String) is
   begin
      if Self.Inside_String then
         Put_Escaped (Self, Json, Twice => False);
      else
         Put (Self, Json);
      end if;
   end Put_Json;

   procedure Put_Quote (Self : in out Builder) with Inline is
   begin
      if Self.Inside_String then
         Put (Self, "\""");
      else
         Put (Self, '"');
      end if;
   end Put_Quote;

   --  A value whose text is the same in both forms: a number, true, false
   procedure Literal (Self : in out Builder; Text : String) is
   begin
      Before_Value (Self);
      Put (Self, Text);
   end Literal;

   function Quoted (Value : String) return String is
      Scratch : Builder;
   begin
      Text (Scratch, Value);
      return Image (Scratch);
   end Quoted;

   procedure Key (Self : in out Builder; Name : String) is
      --  Reserve makes room for the longest form
      pragma Suppress (Index_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
      Last : Natural;
   begin
      Before_Value (Self);
      Reserve (Self, Name'Length + 5);
      Last := Self.Last;
      if Self.Inside_String then
         Self.Data (Last + 1) := '\';
         Last := Last + 1;
      end if;
      Self.Data (Last + 1) := '"';
      Self.Data (Last + 2 .. Last + 1 + Name'Length) := Name;
      Last := Last + 1 + Name'Length;
      if Self.Inside_String then
         Self.Data (Last + 1) := '\';
         Last := Last + 1;
      end if;
      Self.Data (Last + 1 .. Last + 2) := """:";
      Self.Last := Last + 2;
      Self.After_Key := True;
   end Key;

   procedure Text (Self : in out Builder; Value : String) is
   begin
      Before_Value (Self);
      Put_Quote (Self);
      Put_Text (Self, Value);
      Put_Quote (Self);
   end Text;

   subtype Decimal_Text is String (1 .. 20);
   --  Long enough for Long_Long_Integer'First

   --  Value in decimal, with a minus sign if negative, in Image (First ..
   --  Image'Last): the digits are produced from the least significant one,
   --  into the end of the buffer
   procedure Spell_Decimal
     (Value : Long_Long_Integer; Image : out Decimal_Text; First : out Positive)
   is
      Remaining : Long_Long_Integer := Value;
   begin
      First := Image'Last + 1;
      loop
         First := First - 1;
         Image (First) :=
           Character'Val (Character'Pos ('0') + abs (Remaining rem 10));
         Remaining := Remaining / 10;
         exit when Remaining = 0;
      end loop;
      if Value < 0 then
         First := First - 1;
         Image (First) := '-';
      end if;
   end Spell_Decimal;

   procedure Start_Text (Self : in out Builder) is
   begin
      Before_Value (Self);
      Put_Quote (Self);
      Self.In_Text := True;
   end Start_Text;

   procedure Text_Part (Self : in out Builder; Value : String) is
   begin
      Put_Text (Self, Value);
   end Text_Part;

   procedure End_Text (Self : in out Builder) is
   begin
      Put_Quote (Self);
      Self.In_Text := False;
   end End_Text;

   procedure Raw (Self : in out Builder; Json : String) is
   begin
      Before_Value (Self);
      Put_Json (Self, Json);
   end Raw;

   procedure Raw_Document (Self : in out Builder; Other : Builder) is
   begin
      Before_Value (Self);
      if Other.Last = 0 then
         return;
      elsif Self.Inside_String = Other.Inside_String then
         Put (Self, Other.Data (1 .. Other.Last));
      else
         Put_Json (Self, Other.Data (1 .. Other.Last));
      end if;
   end Raw_Document;

   procedure Int (Self : in out Builder; Value : Long_Long_Integer) is
      Image : Decimal_Text;
      First : Positive;
   begin
      Before_Value (Self);
      Spell_Decimal (Value, Image, First);
      Put (Self, Image (First .. Image'Last));
   end Int;

   procedure Bool (Self : in out Builder; Value : Boolean) is
   begin
      Literal (Self, (if Value then "true" else "false"));
   end Bool;

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

   procedure Hole (Self : in out Builder; Kind : Hole_Kind) is
      --  A text hole is quoted, unless it is a part of a text
      Quoted : constant Boolean := Kind = Text_Hole and then not Self.In_Text;
   begin
      if not Self.In_Text then
         Before_Value (Self);
      end if;
      if Quoted then
         Put_Quote (Self);
      end if;
      Self.Hole_Last := Self.Hole_Last + 1;
      Self.Holes (Self.Hole_Last) :=
        (Position => Self.Last, Kind => Kind, Twice => Self.Inside_String);
      if Quoted then
         Put_Quote (Self);
      end if;
   end Hole;

   procedure Document_Part (Self : in out Builder; Other : Builder) is
      First : Positive := 1;
   begin
      for Mark of Other.Holes (1 .. Other.Hole_Last) loop
         Put (Self, Other.Data (First .. Mark.Position));
         Self.Hole_Last := Self.Hole_Last + 1;
         Self.Holes (Self.Hole_Last) := (Mark with delta Position => Self.Last);
         First := Mark.Position + 1;
      end loop;
      Put (Self, Other.Data (First .. Other.Last));
   end Document_Part;

   function To_Template (Self : Builder) return Template is
      Pattern : constant Template := new Template_Text (Self.Hole_Last);
      First   : Positive := 1;
   begin
      Pattern.Inside_String := Self.Inside_String;
      for K in 1 .. Self.Hole_Last loop
         Pattern.Kinds (K) := Self.Holes (K).Kind;
         Pattern.Twice (K) := Self.Holes (K).Twice;
         Pattern.Segments (K - 1) :=
           new String'(Self.Data (First .. Self.Holes (K).Position));
         First := Self.Holes (K).Position + 1;
      end loop;
      Pattern.Segments (Self.Hole_Last) :=
        new String'(Self.Data (First .. Self.Last));
      return Pattern;
   end To_Template;

   procedure Free (Pattern : in out Template) is
      procedure Free_Template is new Ada.Unchecked_Deallocation
        (Template_Text, Template);
   begin
      if Pattern /= null then
         for Segment of Pattern.Segments loop
            Free (Segment);
         end loop;
         Free_Template (Pattern);
      end if;
   end Free;

   procedure Start_Filling (Self : in out Builder; Pattern : Template) is
   begin
      Before_Value (Self);
      Put (Self, Pattern.Segments (0).all);
      if Pattern.Holes > 0 then
         Self.Pattern := Pattern;
         Self.Next := 1;
      end if;
   end Start_Filling;

   --  Value as it stands, then the template's text up to the next hole,
   --  with one reservation for both, which both copies then stay within.
   --  Next is a hole of Pattern while Pattern is set (Is_Sound: Start_
   --  Filling and this procedure keep it so), so the segment read is one;
   --  a Pattern that is not set (a caller's broken precondition) is still
   --  caught, by the access check left on.
   procedure Fill_Plain (Self : in out Builder; Value : String)
   with Inline_Always
   is
      pragma Suppress (Index_Check);
      pragma Suppress (Length_Check);
      pragma Suppress (Range_Check);
      pragma Suppress (Overflow_Check);
      Pattern : Template_Text renames Self.Pattern.all;
      Segment : String renames Pattern.Segments (Self.Next).all;
      Start   : constant Natural := Self.Last;
      Between : constant Natural := Start + Value'Length;
   begin
      Reserve (Self, Value'Length + Segment'Length);
      Self.Data (Start + 1 .. Between) := Value;
      Self.Data (Between + 1 .. Between + Segment'Length) := Segment;
      Self.Last := Between + Segment'Length;
      if Self.Next = Pattern.Holes then
         Self.Pattern := No_Template;
      else
         Self.Next := Self.Next + 1;
      end if;
   end Fill_Plain;

   --  Fill_Text's work, shared with Fill_Texts
   procedure Fill_One_Text
     (Self : in out Builder; Value : String; Plain : Boolean)
   with Inline_Always
   is
   begin
      if Plain then
         Fill_Plain (Self, Value);
      else
         Put_Escaped (Self, Value, Twice => Self.Pattern.Twice (Self.Next));
         Fill_Plain (Self, "");
      end if;
   end Fill_One_Text;

   procedure Fill_Text
     (Self : in out Builder; Value : String; Plain : Boolean) is
   begin
      Fill_One_Text (Self, Value, Plain);
   end Fill_Text;

   procedure Fill_Texts
     (Self : in out Builder; Bytes : String; Spans : Text_Spans;
      Plain : Boolean) is
   begin
      for Span of Spans loop
         Fill_One_Text (Self, Bytes (Span.First .. Span.Last), Plain);
      end loop;
   end Fill_Texts;

   procedure Fill_Fraction (Self : in out Builder; Value : Millis) is
      Image : constant Thousandths.Image := Thousandths.Spelled (Value);
   begin
      Fill_Plain (Self, Image.Text (1 .. Image.Last));
   end Fill_Fraction;

   procedure Fill_Count (Self : in out Builder; Value : Natural) is
      Image : Decimal_Text;
      First : Positive;
   begin
      Spell_Decimal (Long_Long_Integer (Value), Image, First);
      Fill_Plain (Self, Image (First .. Image'Last));
   end Fill_Count;

   procedure Fill_Raw (Self : in out Builder; Json : String) is
   begin
      if Self.Pattern.Twice (Self.Next) then
         Put_Escaped (Self, Json, Twice => False);
         Fill_Plain (Self, "");
      else
         Fill_Plain (Self, Json);
      end if;
   end Fill_Raw;

   procedure Fill_Raw (Self : in out Builder; Json, Quoted_Json : String) is
   begin
      if Self.Pattern.Twice (Self.Next) then
         Fill_Plain (Self, Quoted_Json);
      else
         Fill_Plain (Self, Json);
      end if;
   end Fill_Raw;

   procedure End_Line (Self : in out Builder) is
   begin
      Put (Self, ASCII.LF);
   end End_Line;

   function Length (Self : Builder) return Natural is (Self.Last);

   procedure Query
     (Self : Builder; Process : not null access procedure (Text : String)) is
   begin
      if Self.Data = null then
         Process ("");
      else
         Process (Self.Data (1 .. Self.Last));
      end if;
   end Query;

   function Image (Self : Builder) return String is
     (if Self.Data = null then "" else Self.Data (1 .. Self.Last));

end Json_Text;
