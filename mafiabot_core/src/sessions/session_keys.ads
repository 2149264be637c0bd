--  The session key of law L1: (uid, channel, server).  Key parts never hold
--  control characters (the protocol refuses them), so a unit separator
--  joins them into one text without any possible collision.

with Interfaces;

package Session_Keys is

   Separator : constant Character := ASCII.US;

   function Key_Of (Uid, Channel, Server : String) return String is
     (Uid & Separator & Channel & Separator & Server);

   function Hash64 (Text : String) return Interfaces.Unsigned_64;
   --  FNV-1a: stable across runs and platforms, so per-session draws are
   --  reproducible from the key alone

end Session_Keys;
