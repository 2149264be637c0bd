with Ada.Unchecked_Deallocation;
with Interfaces;
with Json_Bytes;
with Utf8;

package body Json_Reader is

   use type Interfaces.Unsigned_32;

   Initial_Nodes : constant := 256;

   procedure Free is new Ada.Unchecked_Deallocation
     (Node_Array, Node_Array_Access);

   procedure Free is new Ada.Unchecked_Deallocation
     (Open_Stack, Open_Stack_Access);

   overriding procedure Finalize (Self : in out Document) is
   begin
      Free (Self.Nodes);
      Free (Self.Open);
   end Finalize;

   function Is_Line_Of (Self : Document; Line : String) return Boolean is
     (Line'First = Self.Line_First and then Line'Last = Self.Line_Last);

   function Is_Valid (Self : Document) return Boolean is (Self.Valid);

   function Error_Message (Self : Document) return String is
     (Self.Error_Text (1 .. Self.Error_Last));

   function Error_Column (Self : Document) return Positive is
     (Self.Error_Col);

   function Root (Self : Document) return Node_Id is (1);

   function Kind (Self : Document; Node : Node_Id) return Value_Kind is
     (Self.Nodes (Node).Kind);

   function First_Child (Self : Document; Node : Node_Id) return Node_Id is
     (Self.Nodes (Node).First_Child);

   function Next_Sibling (Self : Document; Node : Node_Id) return Node_Id is
     (Self.Nodes (Node).Next_Sibling);

   function Raw (Self : Document; Line : String; Node : Node_Id) return String
   is
      Found : Json_Reader.Node renames Self.Nodes (Node);
   begin
      if Found.Kind = String_Value then
         --  The quotes belong to the text as sent
         return Line (Found.First - 1 .. Found.Last + 1);
      end if;
      return Line (Found.First .. Found.Last);
   end Raw;

   ---------------------------------------------------------------------
   --  Decoding

   function Hex_Digit (C : Character) return Interfaces.Unsigned_32 is
     (case C is
         when '0' .. '9' => Character'Pos (C) - Character'Pos ('0'),
         when 'a' .. 'f' => Character'Pos (C) - Character'Pos ('a') + 10,
         when 'A' .. 'F' => Character'Pos (C) - Character'Pos ('A') + 10,
         when others => 0);

   function Unit_At (Line : String; At_Byte : Positive)
     return Interfaces.Unsigned_32 is
     (Hex_Digit (Line (At_Byte)) * 4096 + Hex_Digit (Line (At_Byte + 1)) * 256
      + Hex_Digit (Line (At_Byte + 2)) * 16 + Hex_Digit (Line (At_Byte + 3)));

   --  The text of Line (First .. Last), a string literal's inside, with its
   --  escapes decoded.  Decoding never lengthens a text, so the result fits
   --  in a buffer of the literal's size.
   function Decoded (Line : String; First : Positive; Last : Natural)
     return String
   is
      Result : String (1 .. Natural'Max (0, Last - First + 1));
      Length : Natural := 0;
      Index  : Positive := First;

      procedure Put (Code : Interfaces.Unsigned_32) is
         function Byte (Value : Interfaces.Unsigned_32) return Character is
           (Character'Val (Natural (Value)));
      begin
         if Code < 16#80# then
            Result (Length + 1) := Byte (Code);
            Length := Length + 1;
         elsif Code < 16#800# then
            Result (Length + 1) := Byte (16#C0# or Interfaces.Shift_Right (Code, 6));
            Result (Length + 2) := Byte (16#80# or (Code and 16#3F#));
            Length := Length + 2;
         elsif Code < 16#1_0000# then
            Result (Length + 1) := Byte (16#E0# or Interfaces.Shift_Right (Code, 12));
            Result (Length + 2) :=
              Byte (16#80# or (Interfaces.Shift_Right (Code, 6) and 16#3F#));
            Result (Length + 3) := Byte (16#80# or (Code and 16#3F#));
            Length := Length + 3;
         else
            Result (Length + 1) := Byte (16#F0# or Interfaces.Shift_Right (Code, 18));
            Result (Length + 2) :=
              Byte (16#80# or (Interfaces.Shift_Right (Code, 12) and 16#3F#));
            Result (Length + 3) :=
              Byte (16#80# or (Interfaces.Shift_Right (Code, 6) and 16#3F#));
            Result (Length + 4) := Byte (16#80# or (Code and 16#3F#));
            Length := Length + 4;
         end if;
      end Put;
   begin
      while Index <= Last loop
         if Line (Index) /= '\' then
            Length := Length + 1;
            Result (Length) := Line (Index);
            Index := Index + 1;
         else
            case Line (Index + 1) is
               when 'u' =>
                  declare
                     Unit : constant Interfaces.Unsigned_32 :=
                       Unit_At (Line, Index + 2);
                  begin
                     if Unit in 16#D800# .. 16#DBFF# then
                        --  Parse saw to it that a low half follows.
                        Put (16#1_0000#
                             + Interfaces.Shift_Left (Unit - 16#D800#, 10)
                             + (Unit_At (Line, Index + 8) - 16#DC00#));
                        Index := Index + 12;
                     else
                        Put (Unit);
                        Index := Index + 6;
                     end if;
                  end;
               when others =>
                  Length := Length + 1;
                  Result (Length) :=
                    (case Line (Index + 1) is
                        when 'n' => ASCII.LF,
                        when 'r' => ASCII.CR,
                        when 't' => ASCII.HT,
                        when 'b' => ASCII.BS,
                        when 'f' => ASCII.FF,
                        when others => Line (Index + 1));
                  Index := Index + 2;
            end case;
         end if;
      end loop;
      return Result (1 .. Length);
   end Decoded;

   --  A literal's inside as text: decoded when it holds escapes, else the
   --  slice itself.
   function Inside (Line : String; First : Positive; Last : Natural;
                    Escaped : Boolean) return String is
     (if Escaped then Decoded (Line, First, Last) else Line (First .. Last));

   function Text (Self : Document; Line : String; Node : Node_Id)
     return String is
     (Inside (Line, Self.Nodes (Node).First, Self.Nodes (Node).Last,
              Self.Nodes (Node).Has_Escapes));

   function Text_Is
     (Self : Document; Line : String; Node : Node_Id; Value : String)
      return Boolean is
     (if Self.Nodes (Node).Has_Escapes then Text (Self, Line, Node) = Value
      else Line (Self.Nodes (Node).First .. Self.Nodes (Node).Last) = Value);

   procedure Query_Text
     (Self    : Document;
      Line    : String;
      Node    : Node_Id;
      Process : not null access procedure (Text : String))
   is
      Found : Json_Reader.Node renames Self.Nodes (Node);
   begin
      if Found.Has_Escapes then
         Process (Decoded (Line, Found.First, Found.Last));
      else
         Process (Line (Found.First .. Found.Last));
      end if;
   end Query_Text;

   function Key (Self : Document; Line : String; Node : Node_Id)
     return String is
     (Inside (Line, Self.Nodes (Node).Key_First, Self.Nodes (Node).Key_Last,
              Self.Nodes (Node).Key_Escaped));

   --  Whether Item's escaped key decodes to Name: apart, so that the
   --  lookup's hot path needs no secondary stack
   function Escaped_Key_Is (Item : Node; Line : String; Name : String)
     return Boolean is
     (Decoded (Line, Item.Key_First, Item.Key_Last) = Name)
   with No_Inline;

   --  Whether Item's key is Name, whose signature is Wanted: nearly every
   --  key that is not differs in its signature, and only a match is
   --  compared byte for byte
   function Is_Named
     (Item : Node; Line : String; Name : String; Wanted : Key_Signature)
      return Boolean is
     (if Item.Key_Escaped then Escaped_Key_Is (Item, Line, Name)
      else Item.Key_Sig = Wanted
           and then Line (Item.Key_First .. Item.Key_Last) = Name)
   with Inline;

   --  A signature's two bits: two six-bit fields of it once mixed
   --  (Fibonacci hashing), so that keys differing only in a digit fall on
   --  different bits
   function Bits_Of (Signature : Key_Signature) return Signature_Set is
     (2 ** Natural ((Signature_Set (Signature) * 16#9E37_79B9_7F4A_7C15#)
                    / 2**58)
      or 2 ** Natural ((Signature_Set (Signature) * 16#9E37_79B9_7F4A_7C15#)
                       / 2**52 mod 2**6))
   with Inline;

   function To_Name_Set (Names : Name_List) return Name_Set is
      Signatures : constant Signature_List (Names'Range) :=
        [for Place in Names'Range => Signature_Of (Names (Place).all)];
      Any        : Signature_Set := 0;
   begin
      for Signature of Signatures loop
         Any := Any or Bits_Of (Signature);
      end loop;
      return (First => Names'First, Last => Names'Last, Names => Names,
              Signatures => Signatures, Any => Any);
   end To_Name_Set;

   --  Key_Index of Item among Names: inlined into the walk, for which it
   --  runs once a member the filter lets through
   function Place_Of (Item : Node; Line : String; Names : Name_Set)
     return Natural
   with Inline_Always
   is
   begin
      for Place in Names.First .. Names.Last loop
         --  The signatures first: a key that is none of the names costs a
         --  comparison of one word a name
         if (Item.Key_Escaped or else Item.Key_Sig = Names.Signatures (Place))
           and then Is_Named (Item, Line, Names.Names (Place).all,
                              Names.Signatures (Place))
         then
            return Place;
         end if;
      end loop;
      return 0;
   end Place_Of;

   function Key_Index
     (Self : Document; Line : String; Node : Node_Id; Names : Name_List)
      return Natural is
     (Place_Of (Self.Nodes (Node), Line, To_Name_Set (Names)));

   procedure Find_Members
     (Self    : Document;
      Line    : String;
      Object  : Node_Id;
      Names   : Name_Set;
      Found   : out Member_Values;
      Unknown : out Node_Id)
   is
      Child : Node_Id := Self.Nodes (Object).First_Child;
   begin
      Found := [others => No_Node];
      Unknown := No_Node;
      while Child /= No_Node loop
         declare
            Item  : Json_Reader.Node renames Self.Nodes (Child);
            --  An escaped key's signature is its spelling's, not its
            --  name's: it is always compared
            Place : constant Natural :=
              (if Item.Key_Escaped
                  or else (Names.Any and Bits_Of (Item.Key_Sig))
                          = Bits_Of (Item.Key_Sig)
               then Place_Of (Item, Line, Names) else 0);
         begin
            if Place /= 0 then
               Found (Place) := Child;
            elsif Unknown = No_Node then
               Unknown := Child;
            end if;
            Child := Item.Next_Sibling;
         end;
      end loop;
   end Find_Members;

   function Member
     (Self : Document; Line : String; Object : Node_Id; Name : String)
      return Node_Id
   is
      Wanted : constant Key_Signature := Signature_Of (Name);
      Found : Node_Id := No_Node;
      Child : Node_Id := Self.Nodes (Object).First_Child;
   begin
      while Child /= No_Node loop
         declare
            Item : Json_Reader.Node renames Self.Nodes (Child);
         begin
            if Is_Named (Item, Line, Name, Wanted) then
               Found := Child;
            end if;
            Child := Item.Next_Sibling;
         end;
      end loop;
      return Found;
   end Member;

   ---------------------------------------------------------------------
   --  Parsing

   Initial_Depth : constant := 16;

   Uncounted_Bytes : constant := 64 * 1024;
   --  A line up to this long gets a node a byte (2 MiB at most, written only
   --  where values are), not a count of its values first

   --  Room in Self.Nodes for every value of Line, made before the parse so
   --  that no node is moved while a line is read.  A line has at most one
   --  value a byte, and at most one value more than it has '[', '{' and ','
   --  bytes (a value is the line's root or follows one: what the input
   --  guard counts as elements).  The second bound is counted only for a
   --  line longer than Uncounted_Bytes and than the array.
   procedure Reserve (Self : in out Document; Line : String) is
      Bound : Node_Id := 1;
   begin
      if Self.Open = null then
         Self.Open := new Open_Stack (1 .. Initial_Depth);
      end if;
      if Self.Nodes /= null and then Self.Nodes'Length >= Line'Length then
         return;
      elsif Line'Length <= Uncounted_Bytes then
         Bound := Line'Length;
      else
         for C of Line loop
            if C in ',' | '[' | '{' then
               Bound := Bound + 1;
            end if;
         end loop;
      end if;
      if Self.Nodes = null or else Self.Nodes'Length < Bound then
         Free (Self.Nodes);
         Self.Nodes := new Node_Array (1 .. Node_Id'Max (Initial_Nodes, Bound));
      end if;
   end Reserve;

   --  Twice the room for open containers: a line nested deeper than any
   --  before it
   procedure Grow_Open (Self : in out Document) is
      Grown : constant Open_Stack_Access :=
        new Open_Stack (1 .. 2 * Self.Open'Length);
   begin
      Grown (Self.Open'Range) := Self.Open.all;
      Free (Self.Open);
      Self.Open := Grown;
   end Grow_Open;

   type Expectation is
     (Value, Value_Or_Close, Key, Key_Or_Close, Colon, Comma_Or_Close, Done);
   --  What may come next: the grammar of RFC 8259 as a state machine, with
   --  the open containers kept on a stack (Document.Open)

   procedure Parse
     (Self : in out Document; Line : String; Within : Input_Guard.Limits)
   is
      Position   : Natural := Line'First;
      State      : Expectation := Value;
      Open       : Node_Id := No_Node;
      In_Object  : Boolean := False;
      --  The innermost container not yet closed, and whether it is an
      --  object
      Depth      : Natural := 0;
      Elements   : Natural := 0;
      --  Containers open, and containers opened plus commas read, as the
      --  input guard counts them
      Key_First  : Positive := 1;
      Key_Last   : Natural := 0;
      Key_Escape : Boolean := False;
      Key_Sig    : Key_Signature := 0;

      Parse_Error : exception;

      procedure Fail (Message : String; At_Byte : Natural) is
         Kept : constant Natural :=
           Natural'Min (Message'Length, Self.Error_Text'Length);
      begin
         Self.Error_Text (1 .. Kept) :=
           Message (Message'First .. Message'First + Kept - 1);
         Self.Error_Last := Kept;
         Self.Error_Col := Natural'Max (1, At_Byte - Line'First + 1);
         raise Parse_Error;
      end Fail;

      --  A node for the value at First .. Last, as the last value of the
      --  innermost open container (a member named by the key just read,
      --  if that is an object).  Inlined, as Scan_String is: each runs once
      --  a value or a key, and does little more than a call's own work (a
      --  frame reaching into Parse's).
      procedure Add_Node
        (Kind    : Value_Kind;
         First   : Positive;
         Last    : Natural;
         Escapes : Boolean := False)
      with Inline_Always
      is
         Made : constant Node_Id := Self.Count + 1;
         --  Within Self.Nodes: Reserve made room for every value
      begin
         Self.Count := Made;
         Self.Nodes (Made) :=
           (Kind         => Kind,
            Has_Escapes  => Escapes,
            Key_Escaped  => In_Object and then Key_Escape,
            First        => First,
            Last         => Last,
            Key_First    => (if In_Object then Key_First else 1),
            Key_Last     => (if In_Object then Key_Last else 0),
            Key_Sig      => (if In_Object then Key_Sig else 0),
            First_Child  => No_Node,
            Next_Sibling => No_Node);
         if Depth > 0 then
            declare
               Top : Open_Container renames Self.Open (Depth);
            begin
               if Top.Last_Child = No_Node then
                  Self.Nodes (Open).First_Child := Made;
               else
                  Self.Nodes (Top.Last_Child).Next_Sibling := Made;
               end if;
               Top.Last_Child := Made;
            end;
         end if;
      end Add_Node;

      procedure After_Value is
      begin
         State := (if Depth = 0 then Done else Comma_Or_Close);
      end After_Value;

      --  Whether the four bytes from At_Byte are hex digits
      function Is_Hex_Quad (At_Byte : Positive) return Boolean is
        (Line'Last - At_Byte >= 3
         and then (for all K in At_Byte .. At_Byte + 3 =>
                     Line (K) in '0' .. '9' | 'a' .. 'f' | 'A' .. 'F'));

      --  Position is on an opening quote: leave it past the closing one,
      --  with the inside's bounds and whether it holds escapes.  What the
      --  input guard asks of a string is asked here too: UTF-8 sequences
      --  whole and well-formed, and each surrogate escape half of a pair.
      procedure Scan_String
        (First : out Positive; Last : out Natural; Escapes : out Boolean)
      with Inline_Always
      is
         Index : Natural := Position + 1;
      begin
         Escapes := False;
         loop
            --  Plain ASCII, most of a string, is passed eight bytes a step
            --  while eight remain, up to the next byte to look at
            while Line'Last - Index >= 7 loop
               declare
                  Plain : constant Json_Bytes.Run_Length :=
                    Json_Bytes.Plain_Ascii_Prefix (Line (Index .. Index + 7));
               begin
                  Index := Index + Plain;
                  exit when Plain < 8;
               end;
            end loop;
            if Index > Line'Last then
               Fail ("unterminated string", Position);
            end if;
            case Line (Index) is
               when '"' =>
                  exit;
               when '\' =>
                  Escapes := True;
                  if Index = Line'Last then
                     Fail ("unterminated string", Position);
                  end if;
                  case Line (Index + 1) is
                     when '"' | '\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' =>
                        Index := Index + 2;
                     when 'u' =>
                        if not Is_Hex_Quad (Index + 2) then
                           Fail ("invalid \u escape", Index);
                        end if;
                        case Unit_At (Line, Index + 2) is
                           when 16#D800# .. 16#DBFF# =>
                              if Line'Last - Index < 11
                                or else Line (Index + 6) /= '\'
                                or else Line (Index + 7) /= 'u'
                                or else not Is_Hex_Quad (Index + 8)
                                or else Unit_At (Line, Index + 8)
                                          not in 16#DC00# .. 16#DFFF#
                              then
                                 Fail ("lone UTF-16 surrogate", Index);
                              end if;
                              Index := Index + 12;
                           when 16#DC00# .. 16#DFFF# =>
                              Fail ("lone UTF-16 surrogate", Index);
                           when others =>
                              Index := Index + 6;
                        end case;
                     when others =>
                        Fail ("invalid escape in string", Index);
                  end case;
               when ASCII.NUL .. ASCII.US =>
                  Fail ("control character in string", Index);
               when Character'Val (16#80#) .. Character'Val (16#FF#) =>
                  declare
                     Length : constant Natural :=
                       Utf8.Sequence_Length (Line, Index);
                  begin
                     if Length = 0 then
                        Fail ("invalid UTF-8 in string", Index);
                     end if;
                     Index := Index + Length;
                  end;
               when others =>
                  Index := Index + 1;
            end case;
         end loop;
         First := Position + 1;
         Last := Index - 1;
         Position := Index + 1;
      end Scan_String;

      function Digits_From (Index : Positive) return Natural is
         Past : Natural := Index;
      begin
         while Past <= Line'Last and then Line (Past) in '0' .. '9' loop
            Past := Past + 1;
         end loop;
         return Past - Index;
      end Digits_From;

      --  -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
      procedure Scan_Number is
         Start : constant Positive := Position;
         Index : Natural := Position;
         Count : Natural;
      begin
         if Line (Index) = '-' then
            Index := Index + 1;
         end if;
         Count := (if Index <= Line'Last then Digits_From (Index) else 0);
         if Count = 0 or else (Count > 1 and then Line (Index) = '0') then
            Fail ("invalid number", Start);
         end if;
         Index := Index + Count;
         if Index <= Line'Last and then Line (Index) = '.' then
            Count := (if Index < Line'Last then Digits_From (Index + 1) else 0);
            if Count = 0 then
               Fail ("invalid number: digits must follow '.'", Start);
            end if;
            Index := Index + 1 + Count;
         end if;
         if Index <= Line'Last and then Line (Index) in 'e' | 'E' then
            Index := Index + 1;
            if Index <= Line'Last and then Line (Index) in '+' | '-' then
               Index := Index + 1;
            end if;
            Count := (if Index <= Line'Last then Digits_From (Index) else 0);
            if Count = 0 then
               Fail ("invalid number: digits must follow the exponent", Start);
            end if;
            Index := Index + Count;
         end if;
         Add_Node (Number_Value, Start, Index - 1);
         Position := Index;
      end Scan_Number;

      procedure Scan_Literal (Word : String; Kind : Value_Kind) is
      begin
         if Line'Last - Position + 1 < Word'Length
           or else Line (Position .. Position + Word'Length - 1) /= Word
         then
            Fail ("invalid literal (true, false or null expected)", Position);
         end if;
         Add_Node (Kind, Position, Position + Word'Length - 1);
         Position := Position + Word'Length;
      end Scan_Literal;

      --  One more container or comma, as the input guard counts them
      procedure Count_Element is
      begin
         if Elements = Within.Max_Elements then
            Fail ("too many elements", Position);
         end if;
         Elements := Elements + 1;
      end Count_Element;

      procedure Close_Container is
      begin
         Self.Nodes (Open).Last := Position;
         Depth := Depth - 1;
         Open := (if Depth = 0 then No_Node else Self.Open (Depth).Container);
         In_Object := Depth > 0 and then Self.Nodes (Open).Kind = Object_Value;
         Position := Position + 1;
         After_Value;
      end Close_Container;

      procedure Scan_Value is
         C : constant Character := Line (Position);
      begin
         case C is
            when '{' | '[' =>
               if Depth = Within.Max_Depth then
                  Fail ("nested too deep", Position);
               end if;
               Count_Element;
               Add_Node ((if C = '{' then Object_Value else Array_Value),
                         Position, Position);
               Open := Self.Count;
               if Depth = Self.Open'Last then
                  Grow_Open (Self);
               end if;
               Depth := Depth + 1;
               Self.Open (Depth) := (Container => Open, Last_Child => No_Node);
               In_Object := C = '{';
               Position := Position + 1;
               State := (if C = '{' then Key_Or_Close else Value_Or_Close);
               return;
            when '"' =>
               declare
                  First   : Positive;
                  Last    : Natural;
                  Escapes : Boolean;
               begin
                  Scan_String (First, Last, Escapes);
                  Add_Node (String_Value, First, Last, Escapes);
               end;
            when '-' | '0' .. '9' =>
               Scan_Number;
            when 't' =>
               Scan_Literal ("true", True_Value);
            when 'f' =>
               Scan_Literal ("false", False_Value);
            when 'n' =>
               Scan_Literal ("null", Null_Value);
            when others =>
               Fail ("unexpected character where a value should be", Position);
         end case;
         After_Value;
      end Scan_Value;

   begin
      Reserve (Self, Line);
      Self.Count := 0;
      Self.Valid := False;
      Self.Line_First := Line'First;
      Self.Line_Last := Line'Last;
      loop
         while Position <= Line'Last
           and then Line (Position) in ' ' | ASCII.HT | ASCII.LF | ASCII.CR
         loop
            Position := Position + 1;
         end loop;
         if Position > Line'Last then
            if State /= Done then
               Fail ("unexpected end of input", Line'Last + 1);
            end if;
            exit;
         end if;

         case State is
            when Done =>
               Fail ("additional data after the JSON value", Position);
            when Value | Value_Or_Close =>
               if State = Value_Or_Close and then Line (Position) = ']' then
                  Close_Container;
               else
                  Scan_Value;
               end if;
            when Key | Key_Or_Close =>
               if State = Key_Or_Close and then Line (Position) = '}' then
                  Close_Container;
               elsif Line (Position) = '"' then
                  Scan_String (Key_First, Key_Last, Key_Escape);
                  Key_Sig := Signature_Of (Line (Key_First .. Key_Last));
                  State := Colon;
               else
                  Fail ("expected a member name in quotes", Position);
               end if;
            when Colon =>
               if Line (Position) /= ':' then
                  Fail ("expected ':' after a member name", Position);
               end if;
               Position := Position + 1;
               State := Value;
            when Comma_Or_Close =>
               if Line (Position) = ',' then
                  Count_Element;
                  Position := Position + 1;
                  State := (if In_Object then Key else Value);
               elsif Line (Position) = (if In_Object then '}' else ']') then
                  Close_Container;
               else
                  Fail ((if In_Object then "expected ',' or '}'"
                         else "expected ',' or ']'"), Position);
               end if;
         end case;
      end loop;
      Self.Valid := True;
   exception
      when Parse_Error =>
         Self.Valid := False;
   end Parse;

end Json_Reader;
