package body Session_Keys is

   function Hash64 (Text : String) return Interfaces.Unsigned_64 is
      use type Interfaces.Unsigned_64;
      Offset_Basis : constant Interfaces.Unsigned_64 := 16#CBF2_9CE4_8422_2325#;
      Prime        : constant Interfaces.Unsigned_64 := 16#0000_0100_0000_01B3#;
      State        : Interfaces.Unsigned_64 := Offset_Basis;
   begin
      for C of Text loop
         State := (State xor Character'Pos (C)) * Prime;
      end loop;
      return State;
   end Hash64;

end Session_Keys;
