with Ada.Strings.Unbounded;

package body Organs.Identity is

   use Ada.Strings.Unbounded;

   function Soul_Document
     (Self  : Organ'Class;
      From  : Organs.Deck.Organ'Class;
      Cards : Big_Three) return String
   is
      LF   : constant Character := ASCII.LF;
      Text : Unbounded_String := To_Unbounded_String
        ("# SOUL" & LF & LF
         & "You are the voice of the mafiabot body. Every turn you are given"
         & " has been carried" & LF
         & "through its 23-step metacognitive cycle; speak from its trace,"
         & " and keep each room's" & LF
         & "matters inside that room." & LF & LF
         & "## Big-3" & LF & LF);
   begin
      for Which in Cards'Range loop
         Append (Text, "- " & Self.Role_Name (Which) & ": "
                 & From.Name (Cards (Which)) & LF);
      end loop;
      Append (Text, LF & Self.Provenance & LF);
      return To_String (Text);
   end Soul_Document;

end Organs.Identity;
