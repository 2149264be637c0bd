--  Whose words a SOUL.md holds, told from its bytes alone (no file is
--  opened here), and the mark the body puts on every SOUL.md it writes.
--
--  The body's SOUL.md ends with one line of its own:
--
--    <!-- mafiabot wrote this ...; edit it and ... before=WHAT sha256=HEX -->
--
--  HEX is the SHA-256 of every byte before " sha256=", so an edit anywhere,
--  the mark included, makes the file the operator's: the body never
--  rewrites a file someone touched.  WHAT is what the body's first write
--  replaced, carried over every later rewrite so that unmount can put it
--  back: Nothing_Before (there was no file), Default_Before (Hermes's
--  default persona), or the name of a backup in the same folder.  The mark
--  is an HTML comment without the words Hermes's prompt-injection scan
--  looks for in comments (tools/threat_patterns.py), so Hermes loads the
--  file as it loads any persona.
--
--  Hermes's default persona is recognised as Hermes 0.19.0 itself tells it
--  apart from a persona someone wrote (hermes_cli/default_soul.py): the
--  text of DEFAULT_SOUL_MD, give or take a leading byte-order mark and
--  white space around it.

package Soul_Marks is

   Soul_Name : constant String := "SOUL.md";

   Backup_Prefix : constant String := "SOUL.md.before-mafiabot";
   --  Every backup's name starts so.  Bodies before the mark kept one
   --  backup under exactly this name.

   Nothing_Before : constant String := "none";
   Default_Before : constant String := "hermes-default";

   Hermes_Default : constant String :=
     "You are Hermes Agent, an intelligent AI assistant created by Nous "
     & "Research. You are helpful, knowledgeable, and direct. You assist "
     & "users with a wide range of tasks including answering questions, "
     & "writing and editing code, analyzing information, creative work, and "
     & "executing actions via your tools. You communicate clearly, admit "
     & "uncertainty when appropriate, and prioritize being genuinely useful "
     & "over being verbose unless otherwise directed below. Be targeted and "
     & "efficient in your exploration and investigations.";
   --  DEFAULT_SOUL_MD of Hermes 0.19.0, byte for byte

   Max_Recognised_Bytes : constant := 64 * 1024;
   --  Neither Hermes's default nor a body's SOUL.md (a fixture's names are
   --  at most 128 bytes each) comes near this: a larger file is the
   --  operator's without being read.

   Max_Before_Bytes : constant := 255;
   --  The longest file name Linux allows

   type Owner is
     (Hermes_Default_Persona,
      --  Hermes's own default text: nobody's words
      Bodys_Own,
      --  A body wrote it and nobody touched it since
      Edited_Bodys,
      --  A body wrote it and someone edited it since: the operator's now
      Operators);
      --  Anything else

   subtype Replaceable is Owner range Hermes_Default_Persona .. Bodys_Own;
   --  What a body may replace without being told to

   type Reading (Before_Length : Natural) is record
      Whose   : Owner;
      Before  : String (1 .. Before_Length);
      --  For Bodys_Own, what the body's first write replaced ("" for an
      --  unmarked SOUL.md of an earlier body); "" otherwise
      Current : Boolean;
      --  The bytes are exactly what Marked (Document, Before) gives
   end record;

   Operators_Words : constant Reading;
   --  What a file too large to read is: nobody else's

   function Read (Content, Document : String) return Reading
   with Pre  => Content'Length <= Max_Recognised_Bytes,
        Post => (Read'Result.Before_Length = 0
                 or else Read'Result.Whose = Bodys_Own)
                and then (not Read'Result.Current
                          or else Read'Result.Whose = Bodys_Own);
   --  Whose words Content holds, given the Document this body writes (an
   --  unmarked Content equal to Document is an earlier body's write)

   function Marked (Document, Before : String) return String
   with Pre => Is_Before (Before) and then Document'Length
                 <= Max_Recognised_Bytes - Max_Before_Bytes - 256;
   --  Document, then a blank line and the mark recording Before

   function Is_Before (Text : String) return Boolean;
   --  Text can stand after before= in a mark: Nothing_Before,
   --  Default_Before, or a backup's name (Backup_Prefix, then no '/', no
   --  space and no control character), at most Max_Before_Bytes long

private

   Operators_Words : constant Reading :=
     (Before_Length => 0, Whose => Operators, Before => "", Current => False);

end Soul_Marks;
