with Session_Keys;

package body Organs.Celtic_Cross is

   use Interfaces;

   function Shuffled_For (Stub : Fixture; Session_Key : String)
     return Draw_State is
     ((Seed => Session_Keys.Hash64 (Session_Key) xor Stub.Draw_Seed));

   --  SplitMix64: a tiny generator whose whole state is one word, so a
   --  session's draws cost 8 bytes to keep.
   procedure Next (Self : in out Draw_State; Stub : Fixture; Result : out Draw)
   is
      Mixed : Unsigned_64;
   begin
      Self.Seed := Self.Seed + 16#9E37_79B9_7F4A_7C15#;
      Mixed := Self.Seed;
      Mixed := (Mixed xor Shift_Right (Mixed, 30)) * 16#BF58_476D_1CE4_E5B9#;
      Mixed := (Mixed xor Shift_Right (Mixed, 27)) * 16#94D0_49BB_1331_11EB#;
      Mixed := Mixed xor Shift_Right (Mixed, 31);
      Result :=
        (Card     => Organs.Deck.Card
           (Shift_Right (Mixed, 1) mod Unsigned_64 (Organs.Deck.Size (Stub))
            + 1),
         Reversed => (Mixed and 1) = 1);
   end Next;

   procedure Describe
     (Stub   : Fixture;
      Result : Draw;
      Pass   : Energy_Gate.Pass_Index;
      Into   : in out Json_Text.Text_Store) is
   begin
      Json_Text.Add (Into, Organs.Deck.Name (Stub, Result.Card).all);
      if Result.Reversed then
         Json_Text.Add (Into, ", reversed");
      end if;
      Json_Text.Add (Into, ", in ");
      Json_Text.Add (Into, Stub.Positions (Pass).all);
   end Describe;

end Organs.Celtic_Cross;
