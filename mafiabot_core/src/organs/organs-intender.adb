with Organs.Word_Search;

package body Organs.Intender is

   function Intent_Of (Stub : Fixture; Input : String) return Stated_Intent is
      --  Whether Word stands in Input from From on, Input's bytes folded as
      --  the other organs compare words (ASCII only: Latin-1 folding would
      --  rewrite the lead bytes of UTF-8 characters into other ones)
      --  (From - 1 <= Input'Last - Word'Length, as every caller sees to)
      function Stands_At (Word : String; From : Positive) return Boolean is
        (for all K in Word'Range =>
           Folded (Input (From + (K - Word'First))) = Word (K));
   begin
      for Index in 1 .. Natural (Stub.Rules.Length) loop
         declare
            Rule : constant Intent_Rule := Stub.Rules.Element (Index);
            Word : String renames Rule.Word.all;
            Hit  : constant Boolean :=
              Input'Length >= Word'Length
              and then
                (case Rule.Match is
                    when Contains =>
                       Organs.Word_Search.Occurs_Folded (Word, Input),
                    when Starts_With =>
                       Stands_At (Word, Input'First),
                    when Ends_With =>
                       Stands_At (Word, Input'Last - Word'Length + 1));
         begin
            if Hit then
               return (Intent => Rule.Intent, Rule => Index);
            end if;
         end;
      end loop;
      return (Intent => Stub.Default_Intent, Rule => 0);
   end Intent_Of;

end Organs.Intender;
