--  The session key of law L1: (uid, channel, server).  Key parts never hold
--  control characters (the protocol refuses them), so a unit separator
--  joins them into one text without any possible collision.

with Fnv_Hash;

package Session_Keys is

   Max_Part_Bytes : constant := 256;
   --  The longest uid, channel or server: the protocol refuses a longer
   --  one, and the trace's room is derived from it

   Separator : constant Character := ASCII.US;

   function Key_Of (Uid, Channel, Server : String) return String is
     (Uid & Separator & Channel & Separator & Server);

   function Hash64 (Text : String) return Fnv_Hash.Hash
     renames Fnv_Hash.Of_Text;
   --  Per-session draws and table slots are reproducible from the key alone

end Session_Keys;
