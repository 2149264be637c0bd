package body Organs.Intender is

   function Intent_Of (Stub : Fixture; Input : String) return Stated_Intent is
      --  ASCII folding, as the other organs compare words: Latin-1 folding
      --  would rewrite the lead bytes of UTF-8 characters into other ones
      Lower : constant String := Folded (Input);
   begin
      for Index in 1 .. Natural (Stub.Rules.Length) loop
         declare
            Rule : constant Intent_Rule := Stub.Rules.Element (Index);
            Word : String renames Rule.Word.all;
            Hit  : constant Boolean :=
              Lower'Length >= Word'Length
              and then
                (case Rule.Match is
                    when Contains =>
                       (for some Start in
                          Lower'First .. Lower'Last - Word'Length + 1 =>
                          Lower (Start) = Word (Word'First)
                          and then Lower (Start .. Start + Word'Length - 1)
                                   = Word),
                    when Starts_With =>
                       Lower (Lower'First .. Lower'First + Word'Length - 1)
                       = Word,
                    when Ends_With =>
                       Lower (Lower'Last - Word'Length + 1 .. Lower'Last)
                       = Word);
         begin
            if Hit then
               return (Intent => Rule.Intent, Rule => Index);
            end if;
         end;
      end loop;
      return (Intent => Stub.Default_Intent, Rule => 0);
   end Intent_Of;

end Organs.Intender;
