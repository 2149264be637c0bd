with GNAT.SHA256;

package body Soul_Marks is

   LF : constant Character := ASCII.LF;

   Mark_Opening : constant String :=
     "<!-- mafiabot wrote this file and rewrites it at boot while it stays"
     & " as written; edit anything in it and it is yours to keep. before=";
   Hash_Key     : constant String := " sha256=";
   Mark_Closing : constant String := " -->" & LF;

   Hash_Length : constant := 64;
   Tail_Length : constant := Hash_Key'Length + Hash_Length + Mark_Closing'Length;
   --  What follows before=WHAT on the mark's line, its LF included

   Byte_Order_Mark : constant String :=
     Character'Val (16#EF#) & Character'Val (16#BB#) & Character'Val (16#BF#);

   function Is_Blank (C : Character) return Boolean is
     (C = ' ' or else C = ASCII.HT or else C = ASCII.CR or else C = LF);

   function Starts_With (Text, Start : String) return Boolean is
     (Text'Length >= Start'Length
      and then Text (Text'First .. Text'First + Start'Length - 1) = Start);

   function Contains (Text, Part : String) return Boolean is
     (for some First in Text'First .. Text'Last - Part'Length + 1 =>
        Text (First .. First + Part'Length - 1) = Part);

   function Is_Hermes_Default (Content : String) return Boolean is
      First : Positive := Content'First;
      Last  : Natural := Content'Last;
   begin
      if Starts_With (Content, Byte_Order_Mark) then
         First := First + Byte_Order_Mark'Length;
      end if;
      while First <= Last and then Is_Blank (Content (First)) loop
         First := First + 1;
      end loop;
      while Last >= First and then Is_Blank (Content (Last)) loop
         Last := Last - 1;
      end loop;
      return Content (First .. Last) = Hermes_Default;
   end Is_Hermes_Default;

   function Is_Before (Text : String) return Boolean is
     (Text'Length <= Max_Before_Bytes
      and then (Text = Nothing_Before or else Text = Default_Before
                or else (Starts_With (Text, Backup_Prefix)
                         and then (for all C of Text =>
                                     C > ' ' and then C /= '/'
                                     and then C /= Character'Val (127)))));

   function Marked (Document, Before : String) return String is
      Head : constant String :=
        Document
        & (if Document'Length > 0 and then Document (Document'Last) = LF
           then "" else [LF])
        & LF & Mark_Opening & Before;
   begin
      return Head & Hash_Key & GNAT.SHA256.Digest (Head) & Mark_Closing;
   end Marked;

   function Read (Content, Document : String) return Reading is
   begin
      if Is_Hermes_Default (Content) then
         return (Before_Length => 0, Whose => Hermes_Default_Persona,
                 Before => "", Current => False);
      elsif Content = Document then
         return (Before_Length => 0, Whose => Bodys_Own, Before => "",
                 Current => False);
      elsif not Contains (Content, Mark_Opening) then
         return Operators_Words;
      elsif Content'Length < Mark_Opening'Length + Tail_Length
        or else Content (Content'Last - Mark_Closing'Length + 1
                         .. Content'Last) /= Mark_Closing
      then
         return (Operators_Words with delta Whose => Edited_Bodys);
      end if;
      declare
         Key_First  : constant Positive := Content'Last - Tail_Length + 1;
         Hash_First : constant Positive := Key_First + Hash_Key'Length;
         Line_First : Positive := Key_First;
      begin
         while Line_First > Content'First
           and then Content (Line_First - 1) /= LF
         loop
            Line_First := Line_First - 1;
         end loop;
         if Content (Key_First .. Hash_First - 1) /= Hash_Key
           or else not Starts_With (Content (Line_First .. Key_First - 1),
                                    Mark_Opening)
           or else GNAT.SHA256.Digest (Content (Content'First .. Key_First - 1))
                   /= Content (Hash_First .. Hash_First + Hash_Length - 1)
         then
            return (Operators_Words with delta Whose => Edited_Bodys);
         end if;
         declare
            Before : constant String :=
              Content (Line_First + Mark_Opening'Length .. Key_First - 1);
         begin
            if not Is_Before (Before) then
               return (Operators_Words with delta Whose => Edited_Bodys);
            end if;
            return (Before_Length => Before'Length, Whose => Bodys_Own,
                    Before => Before,
                    Current => Content = Marked (Document, Before));
         end;
      end;
   end Read;

end Soul_Marks;
