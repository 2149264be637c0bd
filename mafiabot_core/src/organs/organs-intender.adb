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

      Rule_Count  : constant Natural := Natural (Stub.Rules.Length);
      Rules_Found : Organs.Word_Search.Word_Flags (1 .. Rule_Count);
      --  By rule number: whether its word stands in the input (contains
      --  rules only), all of them found in one search the first time a
      --  contains rule is reached
      Searched    : Boolean := False;

      procedure Search_Contains is
         Words  : Organs.Word_Search.Word_List (1 .. Rule_Count) :=
           [others => Stub.Rules.First_Element.Word];
         --  The contains rules' words, first Count of them; a list of
         --  non-null texts needs some text in every place until then
         Number : array (1 .. Rule_Count) of Positive := [others => 1];
         --  The rule each of Words comes from
         Count  : Natural := 0;
      begin
         for Index in 1 .. Rule_Count loop
            if Stub.Rules.Element (Index).Match = Contains then
               Count := Count + 1;
               Words (Count) := Stub.Rules.Element (Index).Word;
               Number (Count) := Index;
            end if;
         end loop;
         declare
            Found : Organs.Word_Search.Word_Flags (1 .. Count);
         begin
            Organs.Word_Search.Find_Folded (Words (1 .. Count), Input, Found);
            Rules_Found := [others => False];
            for K in 1 .. Count loop
               Rules_Found (Number (K)) := Found (K);
            end loop;
         end;
         Searched := True;
      end Search_Contains;
   begin
      for Index in 1 .. Rule_Count loop
         declare
            Rule : constant Intent_Rule := Stub.Rules.Element (Index);
            Word : String renames Rule.Word.all;
            Hit  : Boolean;
         begin
            case Rule.Match is
               when Contains =>
                  if not Searched then
                     Search_Contains;
                  end if;
                  Hit := Rules_Found (Index);
               when Starts_With =>
                  Hit := Input'Length >= Word'Length
                    and then Stands_At (Word, Input'First);
               when Ends_With =>
                  Hit := Input'Length >= Word'Length
                    and then Stands_At (Word, Input'Last - Word'Length + 1);
            end case;
            if Hit then
               return (Intent => Rule.Intent, Rule => Index);
            end if;
         end;
      end loop;
      return (Intent => Stub.Default_Intent, Rule => 0);
   end Intent_Of;

end Organs.Intender;
