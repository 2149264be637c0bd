package body Fnv_Hash is

   function Of_Text (Text : String) return Hash is
      State : Hash := Basis;
   begin
      for C of Text loop
         State := Step (State, C);
      end loop;
      return State;
   end Of_Text;

end Fnv_Hash;
