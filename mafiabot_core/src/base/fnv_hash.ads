--  FNV-1a, 64 bits: stable across runs and platforms, so whatever is
--  derived from it (a session's draws, its table slot, word identities) is
--  reproducible.  Not a defence against chosen collisions: callers compare
--  the texts themselves where a collision would matter.

with Interfaces;

package Fnv_Hash is

   use type Interfaces.Unsigned_64;

   subtype Hash is Interfaces.Unsigned_64;

   Basis : constant Hash := 16#CBF2_9CE4_8422_2325#;
   Prime : constant Hash := 16#0000_0100_0000_01B3#;

   function Step (State : Hash; C : Character) return Hash is
     ((State xor Character'Pos (C)) * Prime);
   --  Fold one more byte into a hash begun at Basis

   function Of_Text (Text : String) return Hash;

end Fnv_Hash;
