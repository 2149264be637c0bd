--  SOUL.md, the first block of Hermes's system prompt: written at boot
--  (B2), described for doctor and mount, put back for unmount.
--
--  Invariants:
--  - Nobody's words are lost or changed without a word.  A boot replaces
--    SOUL.md only where it is missing, is Hermes's default persona or is a
--    body's own write nobody edited since (Soul_Marks); the operator's own
--    only under --soul replace, and then only once a backup of exactly the
--    bytes it judged stands beside it.  Left alone, an operator's file gets
--    one warning on stderr naming it and the option that would replace it.
--  - Every write is a whole file made under a name of this process's own in
--    the same folder, then rename(2)d over SOUL.md, or link(2)ed to it
--    where there is none: a reader or a racing boot sees the old file or
--    the new one, and a file that appears meanwhile is never replaced
--    unjudged.
--  - Backups are SOUL.md.before-mafiabot.<UTC time>, with -2, -3, ... for
--    more in the same second, linked to their name (so never overwritten,
--    never torn); one already there with the same bytes is used again
--    rather than doubled.  Nothing here deletes a backup.
--  - Racing boots: each boot judges its own copy of SOUL.md and backs up
--    that copy, so a backup never holds a body's soul; bodies only ever
--    write bodies' souls, so once one boot has backed up the operator's
--    file no later boot meets it again.  The one window left is an edit
--    saved by an editor (which shares no lock with the body) in the
--    microseconds between a boot's copy and its rename.
--  - Describe writes nothing.  Failures of Write are warnings (the body
--    serves without its soul); Describe and Restore raise the
--    Ada.IO_Exceptions for the caller to report.

with Ada.Strings.Unbounded;
with Body_Config;

package Soul_Writer is

   procedure Write
     (Home, Document : String; Policy : Body_Config.Soul_Policy);
   --  Make Home/SOUL.md hold Document, marked, as Policy allows, creating
   --  Home if needed

   function Describe
     (Home, Document : String; Policy : Body_Config.Soul_Policy)
      return String;
   --  "STATE<TAB>sentence": STATE is missing, hermes-default, body or
   --  operator; the sentence names the file and says what a boot with
   --  Policy, and an unmount, would do with it

   procedure Restore
     (Home, Document : String;
      Outcome        : out Ada.Strings.Unbounded.Unbounded_String);
   --  Put back what the body's SOUL.md replaced (a backup, Hermes's
   --  default, or no file) if the body's is there unedited; else leave it.
   --  Outcome is "OUTCOME<TAB>sentence": OUTCOME is restored, removed,
   --  kept or missing

end Soul_Writer;
