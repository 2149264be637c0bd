with Ada.Characters.Handling;
with Ada.Containers.Indefinite_Ordered_Sets;

package body Organs.Cognition is

   function Reason
     (Stub : Fixture; Way : Direction; Rank : Quarter; Focus, Draw : String)
      return String is
     (Move_Name (Stub, Way, Rank) & " '" & Focus & "' through " & Draw);

   package Word_Sets is new Ada.Containers.Indefinite_Ordered_Sets (String);

   function Words_Of (Text : String) return Word_Sets.Set is
      Words : Word_Sets.Set;
      Start : Natural := 0;
   begin
      for Index in Text'First .. Text'Last + 1 loop
         if Index <= Text'Last
           and then (Ada.Characters.Handling.Is_Alphanumeric (Text (Index))
                     or else Text (Index) >= Character'Val (128))
         then
            if Start = 0 then
               Start := Index;
            end if;
         elsif Start /= 0 then
            Words.Include (Ada.Characters.Handling.To_Lower
                             (Text (Start .. Index - 1)));
            Start := 0;
         end if;
      end loop;
      return Words;
   end Words_Of;

   function Cohere (Output, Final_Cognition : String) return Coherence is
      use type Ada.Containers.Count_Type;
      Said    : constant Word_Sets.Set := Words_Of (Output);
      Thought : constant Word_Sets.Set := Words_Of (Final_Cognition);
      Both    : constant Ada.Containers.Count_Type :=
        Word_Sets.Intersection (Said, Thought).Length;
      Either  : constant Ada.Containers.Count_Type :=
        Word_Sets.Union (Said, Thought).Length;
      Score   : constant Millis :=
        (if Either = 0 then Energy_Gate.Full
         else Millis (Both * 1000 / Either));
   begin
      return (Score => Score, Drift => Energy_Gate.Full - Score);
   end Cohere;

end Organs.Cognition;
