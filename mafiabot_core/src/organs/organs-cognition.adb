with Interfaces;
with Fnv_Hash;

package body Organs.Cognition is

   procedure Reason
     (Stub  : Fixture;
      Way   : Direction;
      Rank  : Quarter;
      Focus : String;
      Draw  : Json_Text.Stored_Text;
      Into  : in out Json_Text.Text_Store) is
   begin
      Json_Text.Add (Into, Move_Name (Stub, Way, Rank));
      Json_Text.Add (Into, " '");
      Json_Text.Add (Into, Focus);
      Json_Text.Add (Into, "' through ");
      Json_Text.Add_Kept (Into, Draw);
   end Reason;

   Max_Words : constant := 512;
   --  More words than this in one text are not compared (outputs and
   --  thoughts quote at most a short excerpt of the input)

   type Word_Hashes is array (1 .. Max_Words) of Interfaces.Unsigned_64;

   type Byte_Table is array (Character) of Character;

   Word_Byte : constant Byte_Table :=
     [for C in Character =>
        (if Is_Word_Byte (C) then Folded (C) else Character'Val (0))];
   --  Each byte as a word compares it, or NUL where a word ends: one
   --  lookup a byte instead of a test and a fold

   --  The distinct words of Text (letters, digits and non-ASCII bytes,
   --  compared without case), as FNV-1a hashes in Hashes (1 .. Count),
   --  sorted: two texts share a word iff they share its hash, barring a
   --  2**-64 collision.
   procedure Collect_Words
     (Text : String; Hashes : out Word_Hashes; Count : out Natural)
   is
      use type Interfaces.Unsigned_64;
      Word_Hash : Fnv_Hash.Hash := Fnv_Hash.Basis;
      In_Word   : Boolean := False;

      --  Binary search for Hash's place; the greater hashes move up one
      procedure Insert (Hash : Interfaces.Unsigned_64)
      with Pre => Count < Max_Words
      is
         Low  : Positive := 1;
         High : Natural := Count;
      begin
         while Low <= High loop
            declare
               Middle : constant Positive := (Low + High) / 2;
            begin
               if Hashes (Middle) = Hash then
                  return;
               elsif Hashes (Middle) < Hash then
                  Low := Middle + 1;
               else
                  High := Middle - 1;
               end if;
            end;
         end loop;
         Hashes (Low + 1 .. Count + 1) := Hashes (Low .. Count);
         Hashes (Low) := Hash;
         Count := Count + 1;
      end Insert;
   begin
      Count := 0;
      --  Each word is hashed as it is read, and inserted where it ends
      for C of Text loop
         if Word_Byte (C) /= Character'Val (0) then
            Word_Hash := Fnv_Hash.Step (Word_Hash, Word_Byte (C));
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
   end Collect_Words;

   function Cohere (Output, Final_Cognition : String) return Coherence is
      use type Interfaces.Unsigned_64;
      Said, Thought        : Word_Hashes;
      Said_Count, Thought_Count : Natural;
      Both  : Natural := 0;
      Left  : Positive := 1;
      Right : Positive := 1;
   begin
      Collect_Words (Output, Said, Said_Count);
      Collect_Words (Final_Cognition, Thought, Thought_Count);
      --  Both lists are sorted: one merge pass counts the shared words.
      while Left <= Said_Count and then Right <= Thought_Count loop
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
         Either : constant Natural := Said_Count + Thought_Count - Both;
         Score  : constant Millis :=
           (if Either = 0 then Energy_Gate.Full else Both * 1000 / Either);
      begin
         return (Score => Score, Drift => Energy_Gate.Full - Score);
      end;
   end Cohere;

end Organs.Cognition;
