--  Aux reads an unbounded string's bytes where they are, which the
--  standard cannot (To_String copies): GNAT's own unit, for layered code
--  such as GNAT.SPITBOL, hence the warnings; the body builds with GNAT
--  only, and Read_In_Place below is its one use
pragma Warnings (Off, "*internal GNAT unit*");
pragma Warnings (Off, "*non-portable*");
with Ada.Strings.Unbounded.Aux;
pragma Warnings (On, "*internal GNAT unit*");
pragma Warnings (On, "*non-portable*");
with Organs.Morag.Words;
with Utf8;

package body Organs.Morag.Excerpts is

   use Ada.Strings.Unbounded;

   Length_Bytes : constant := 2;

   --  Where the Index-th excerpt's bytes start in Held.Kept, counted from
   --  the nearer end of the text
   function First_Byte
     (Held : Excerpt_Memory; Index : Recall_Count) return Positive
   is
      First : Natural;
   begin
      if Index <= Held.Count / 2 then
         First := 1 + Length_Bytes;
         for Older in 1 .. Index - 1 loop
            First := First + Length_Bytes + Natural (Held.Sizes (Older));
         end loop;
      else
         First := Length (Held.Kept) + 1 - Natural (Held.Sizes (Index));
         for Newer in Index + 1 .. Held.Count loop
            First := First - Length_Bytes - Natural (Held.Sizes (Newer));
         end loop;
      end if;
      return First;
   end First_Byte;

   overriding function Excerpt
     (Held : Excerpt_Memory; Index : Recall_Count) return String
   is
      First : constant Positive := First_Byte (Held, Index);
   begin
      return Slice (Held.Kept, First, First + Natural (Held.Sizes (Index)) - 1);
   end Excerpt;

   --  GNAT's view of an unbounded string's own bytes (Aux.Get_String):
   --  valid only while the string is neither read nor changed otherwise,
   --  which Process may not do (Read_Excerpt's and Read_Word_Index's
   --  contract).  The view's bounds are 1 .. Positive'Last, so no index
   --  check would catch a slice past the string's end: the test below
   --  does, in every build.
   procedure Read_In_Place
     (Text    : Unbounded_String;
      First   : Positive;
      Last    : Natural;
      Process : not null access procedure (Bytes : String))
   with Inline
   is
      Bytes : Ada.Strings.Unbounded.Aux.Big_String_Access;
      Used  : Natural;
   begin
      Ada.Strings.Unbounded.Aux.Get_String (Text, Bytes, Used);
      if Last > Used then
         raise Program_Error with "a read past a kept text's end";
      end if;
      Process (Bytes (First .. Last));
   end Read_In_Place;

   overriding procedure Read_Excerpt
     (Held    : Excerpt_Memory;
      Index   : Recall_Count;
      Process : not null access procedure (Excerpt : String))
   is
      First : constant Positive := First_Byte (Held, Index);
   begin
      Read_In_Place
        (Held.Kept, First, First + Natural (Held.Sizes (Index)) - 1, Process);
   end Read_Excerpt;

   overriding procedure Keep
     (Held    : in out Excerpt_Memory;
      Turn    : Positive;
      Excerpt : String;
      Depth   : Recall_Count)
   is
      Dropped : Natural := 0;
      Keeping : constant Natural :=
        (if Held.Count > 0 and then Turn = Held.Newest + 1
         then Depth - 1 else 0);
      --  How many older excerpts stay: none after a gap in the turns
   begin
      while Held.Count > Keeping loop
         Dropped := Dropped + Length_Bytes + Natural (Held.Sizes (1));
         Held.Sizes (1 .. Held.Count - 1) := Held.Sizes (2 .. Held.Count);
         Held.Count := Held.Count - 1;
      end loop;
      --  Rebuilt at their exact sizes: Append would leave growth room in
      --  every one of possibly 100,000 sessions.  Set_Unbounded_String
      --  writes over the old text's room when it is no longer and not
      --  much shorter (a memory that keeps as much as it forgets), instead
      --  of allocating a new one and freeing the old.
      Set_Unbounded_String
        (Held.Kept,
         Slice (Held.Kept, Dropped + 1, Length (Held.Kept))
         & Character'Val (Excerpt'Length mod 256)
         & Character'Val (Excerpt'Length / 256) & Excerpt);
      if Held.Indexed then
         declare
            --  The index as it was, read in place.  Added's result is whole
            --  before the index is written, and the view is not read again:
            --  the write is the view's last use, as Aux's rule asks
            procedure Add_To (Index : String) is
            begin
               Set_Unbounded_String
                 (Held.Index, Words.Added (Index, Held.Count, Excerpt));
            end Add_To;
         begin
            Read_In_Place
              (Held.Index, 1, Length (Held.Index), Add_To'Access);
         end;
      end if;
      Held.Count := Held.Count + 1;
      Held.Sizes (Held.Count) := Excerpt_Length (Excerpt'Length);
      Held.Newest := Turn;
   end Keep;

   overriding function Word_Index (Held : Excerpt_Memory) return String is
   begin
      if Held.Indexed then
         return To_String (Held.Index);
      end if;
      declare
         --  The index of the oldest Through excerpts
         function Index_Through (Through : Natural) return String is
           (if Through = 0 then Words.Empty_Index
            else Words.Added (Index_Through (Through - 1), Through - 1,
                              Held.Excerpt (Through)));
      begin
         return Index_Through (Held.Count);
      end;
   end Word_Index;

   overriding procedure Read_Word_Index
     (Held    : Excerpt_Memory;
      Process : not null access procedure (Index : String)) is
   begin
      if Held.Indexed then
         Read_In_Place (Held.Index, 1, Length (Held.Index), Process);
      else
         Process (Word_Index (Held));
      end if;
   end Read_Word_Index;

   overriding procedure Index_Words (Held : in out Excerpt_Memory) is
   begin
      if not Held.Indexed then
         Held.Index := To_Unbounded_String (Word_Index (Held));
         Held.Indexed := True;
      end if;
   end Index_Words;

   function Encoded (Held : Excerpt_Memory) return String is
     (Character'Val (Held.Count) & To_String (Held.Kept));

   procedure Decode
     (Bytes       : String;
      Newest_Turn : Natural;
      Held        : out Excerpt_Memory;
      Status      : out Decode_Status)
   is
      At_Byte : Natural := Bytes'First + 1;
      Total   : Natural;
   begin
      Held := Empty;
      if Bytes'Length = 0 then
         Status := Malformed;
         return;
      end if;
      Total := Character'Pos (Bytes (Bytes'First));
      if Total > Max_Depth or else Total > Newest_Turn then
         Status := Malformed;
         return;
      end if;
      for Index in 1 .. Total loop
         if Bytes'Last - At_Byte + 1 < Length_Bytes then
            Held := Empty;
            Status := Malformed;
            return;
         end if;
         declare
            Size  : constant Natural :=
              Character'Pos (Bytes (At_Byte))
              + 256 * Character'Pos (Bytes (At_Byte + 1));
            Start : constant Positive := At_Byte + Length_Bytes;
         begin
            if Size > Max_Recall_Bytes or else Bytes'Last - Start + 1 < Size
            then
               Held := Empty;
               Status := Malformed;
               return;
            end if;
            declare
               Text : String renames Bytes (Start .. Start + Size - 1);
            begin
               if not Utf8.Is_Valid (Text) then
                  Held := Empty;
                  Status := Not_Utf8;
                  return;
               end if;
               Keep (Held, Newest_Turn - Total + Index, Text, Max_Depth);
            end;
            At_Byte := Start + Size;
         end;
      end loop;
      if At_Byte /= Bytes'Last + 1 then
         Held := Empty;
         Status := Malformed;
         return;
      end if;
      Status := Decoded;
   end Decode;

end Organs.Morag.Excerpts;
