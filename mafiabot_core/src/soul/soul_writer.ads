--  Writes SOUL.md, the first block of Hermes's system prompt, at boot (B2).
--
--  The file is replaced atomically (a temporary file in the same folder,
--  then rename(2)), so a reader or a racing boot sees the old file or the
--  new one, never a torn one.  It is only written when its content differs;
--  the first time a different file is replaced, a copy is kept beside it as
--  SOUL.md.before-mafiabot.  Failures are warnings: a body that cannot
--  write its soul still serves.

package Soul_Writer is

   procedure Write (Home : String; Document : String);
   --  Make Home/SOUL.md hold Document, creating Home if needed

end Soul_Writer;
