with Interfaces;
with Fnv_Hash;

package body Organs.Cognition is

   function Reason
     (Stub : Fixture; Way : Direction; Rank : Quarter; Focus, Draw : String)
      return String is
     (Move_Name (Stub, Way, Rank) & " '" & Focus & "' through " & Draw);

   Max_Words : constant := 512;
   --  More words than this in one text are not compared (outputs and
   --  thoughts quote at most a short excerpt of the input)

   type Word_Hashes is array (Positive range <>) of Interfaces.Unsigned_64;

   --  The distinct words of Text (letters, digits and non-ASCII bytes,
   --  compared without case), as sorted FNV-1a hashes: two texts share a
   --  word iff they share its hash, barring a 2**-64 collision.
   function Words_Of (Text : String) return Word_Hashes is
      use type Interfaces.Unsigned_64;
      Hashes    : Word_Hashes (1 .. Max_Words);
      Count     : Natural := 0;
      Word_Hash : Fnv_Hash.Hash := Fnv_Hash.Basis;
      In_Word   : Boolean := False;

      procedure Insert (Hash : Interfaces.Unsigned_64) is
         Place : Positive := Count + 1;
      begin
         for K in 1 .. Count loop
            if Hashes (K) = Hash then
               return;
            elsif Hashes (K) > Hash then
               Place := K;
               exit;
            end if;
         end loop;
         Hashes (Place + 1 .. Count + 1) := Hashes (Place .. Count);
         Hashes (Place) := Hash;
         Count := Count + 1;
      end Insert;
   begin
      --  Each word is hashed as it is read, and inserted where it ends
      for C of Text loop
         if Is_Word_Byte (C) then
            Word_Hash := Fnv_Hash.Step (Word_Hash, Folded (C));
            In_Word := True;
         elsif In_Word then
            exit when Count = Max_Words;
            Insert (Word_Hash);
            Word_Hash := Fnv_Hash.Basis;
            In_Word := False;
         end if;
      end loop;
      if In_Word and then Count < Max_Words then
         Insert (Word_Hash);
      end if;
      return Hashes (1 .. Count);
   end Words_Of;

   function Cohere (Output, Final_Cognition : String) return Coherence is
      use type Interfaces.Unsigned_64;
      Said    : constant Word_Hashes := Words_Of (Output);
      Thought : constant Word_Hashes := Words_Of (Final_Cognition);
      Both    : Natural := 0;
      Left    : Positive := Said'First;
      Right   : Positive := Thought'First;
   begin
      --  Both lists are sorted: one merge pass counts the shared words.
      while Left <= Said'Last and then Right <= Thought'Last loop
         if Said (Left) = Thought (Right) then
            Both := Both + 1;
            Left := Left + 1;
            Right := Right + 1;
         elsif Said (Left) < Thought (Right) then
            Left := Left + 1;
         else
            Right := Right + 1;
         end if;
      end loop;
      declare
         Either : constant Natural := Said'Length + Thought'Length - Both;
         Score  : constant Millis :=
           (if Either = 0 then Energy_Gate.Full else Both * 1000 / Either);
      begin
         return (Score => Score, Drift => Energy_Gate.Full - Score);
      end;
   end Cohere;

end Organs.Cognition;
