with AUnit.Assertions;
with Soul_Marks;

package body Soul_Marks_Tests is

   use AUnit.Assertions;
   use Soul_Marks;

   LF : constant Character := ASCII.LF;

   Document : constant String :=
     "# SOUL" & LF & LF & "You are the voice of a test body." & LF;
   Other_Document : constant String :=
     "# SOUL" & LF & LF & "You are the voice of another body." & LF;
   Backup : constant String := Backup_Prefix & ".20261201T083705Z-2";

   function Flipped (Text : String; At_Index : Positive) return String is
      Result : String := Text;
   begin
      Result (At_Index) :=
        Character'Val ((Character'Pos (Result (At_Index)) + 1) mod 256);
      return Result;
   end Flipped;

   procedure Test_Own_Writes (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);

      procedure Check (Before : String) is
         Written : constant String := Marked (Document, Before);
         Found   : constant Reading := Read (Written, Document);
         Later   : constant Reading := Read (Written, Other_Document);
      begin
         Assert (Found.Whose = Bodys_Own and then Found.Before = Before
                 and then Found.Current,
                 "the body's own write, with " & Before);
         Assert (Later.Whose = Bodys_Own and then Later.Before = Before
                 and then not Later.Current,
                 "another identity's write is a body's too, not current");
      end Check;

      Unmarked : constant Reading := Read (Document, Document);
   begin
      Check (Nothing_Before);
      Check (Default_Before);
      Check (Backup);
      Check (Backup_Prefix);
      Assert (Unmarked.Whose = Bodys_Own and then Unmarked.Before = ""
              and then not Unmarked.Current,
              "an unmarked document equal to this body's is an earlier body's");
   end Test_Own_Writes;

   --  The mark's whole promise: no byte of the file can change, the mark
   --  included, and leave it the body's to rewrite
   procedure Test_Every_Edit_Makes_It_The_Operators
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      Written : constant String := Marked (Document, Backup);
   begin
      for Index in Written'Range loop
         Assert (Read (Flipped (Written, Index), Document).Whose
                   in Edited_Bodys | Operators,
                 "a byte changed at" & Index'Image & " left it the body's");
      end loop;
      for Last in Written'First .. Written'Last - 1 loop
         --  Cut to the document itself, it is an earlier body's unmarked
         --  write: rewriting it loses no one's words
         Assert (Read (Written (Written'First .. Last), Document).Whose
                   in Edited_Bodys | Operators
                 or else Written (Written'First .. Last) = Document,
                 "cut after" & Last'Image & " left it the body's");
      end loop;
      Assert (Read (Written & "More." & LF, Document).Whose = Edited_Bodys,
              "a line after the mark");
      Assert (Read ("My own persona." & LF, Document).Whose = Operators,
              "text without a mark");
   end Test_Every_Edit_Makes_It_The_Operators;

   procedure Test_Hermes_Default (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      BOM : constant String :=
        Character'Val (16#EF#) & Character'Val (16#BB#) & Character'Val (16#BF#);
      CR  : constant Character := ASCII.CR;

      procedure Check (Variant : String) is
      begin
         Assert (Read (Variant, Document).Whose = Hermes_Default_Persona,
                 "Hermes's default, give or take a BOM and white space");
      end Check;
   begin
      Check (Hermes_Default);
      Check (Hermes_Default & LF);
      Check (CR & LF & Hermes_Default & CR & LF & CR & LF);
      Check (BOM & Hermes_Default);
      Check ("  " & Hermes_Default & ASCII.HT);
      for Index in Hermes_Default'Range loop
         Assert (Read (Flipped (Hermes_Default, Index), Document).Whose
                   = Operators,
                 "one byte off Hermes's default at" & Index'Image);
      end loop;
      Assert (Read (Hermes_Default & LF & "Also: be brief." & LF, Document).Whose
                = Operators,
              "Hermes's default with a line added");
   end Test_Hermes_Default;

   procedure Test_Before_Names (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);

      procedure Refused (Name : String) is
      begin
         Assert (not Is_Before (Name), "refused: " & Name);
      end Refused;
   begin
      Assert (Is_Before (Nothing_Before) and then Is_Before (Default_Before)
              and then Is_Before (Backup) and then Is_Before (Backup_Prefix),
              "what a boot records");
      Refused (Backup_Prefix & "/../../x");
      Refused (Backup_Prefix & ". x");
      Refused ("SOUL.md");
      Refused ("../" & Backup_Prefix);
      Refused ("");
      Refused (Backup_Prefix & ASCII.HT);
      Assert (not Is_Before (Backup_Prefix & [1 .. 256 => 'x']),
              "longer than a file name");
   end Test_Before_Names;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Own_Writes'Access, "the body knows its own writes, and what they replaced");
      Register_Routine (T, Test_Every_Edit_Makes_It_The_Operators'Access,
                        "any byte changed or cut, the mark's included, makes the file the operator's");
      Register_Routine (T, Test_Hermes_Default'Access, "Hermes's default is known as Hermes knows it, no more");
      Register_Routine (T, Test_Before_Names'Access, "a mark records only what a boot could have replaced");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Soul_Marks");
   end Name;

end Soul_Marks_Tests;
