--  The words a MoRAG ranking counts, and a text's words as a list
--  (Index_Of) that a memory keeps beside the text, so that a recall reads
--  a short list for each kept turn instead of its text.
--
--  Words are those of Organs.Word_Search: maximal runs of Is_Word_Byte
--  bytes, Min_Word_Bytes or more, ASCII folded (Folded).  A list names a
--  word by its folded bytes as well as by a hash, so that two words of one
--  hash are never counted as one: whoever matches on the hash compares the
--  bytes (Fnv_Hash is no defence against chosen collisions).

with Fnv_Hash;
with Interfaces;
with Organs.Word_Search;

package Organs.Morag.Words is

   Min_Word : constant := Organs.Word_Search.Min_Word_Bytes;

   Not_A_Word : constant Character := ASCII.NUL;

   Word_Fold : constant array (Character) of Character :=
     [for C in Character =>
        (if Is_Word_Byte (C) then Folded (C) else Not_A_Word)];
   --  A byte as a word holds it (Folded), or Not_A_Word: one look-up for
   --  every byte a ranking reads

   procedure Next_Word
     (Text  : String;
      Index : in out Positive;
      First : out Positive;
      Last  : out Natural;
      Hash  : out Fnv_Hash.Hash;
      Found : out Boolean);
   --  The next word of Text at or after Index: Text (First .. Last) and
   --  the hash of its folded bytes; Found is False past the last

   subtype Word_Key is Interfaces.Unsigned_32;
   --  The low half of a word's hash: what a list keeps of it

   function Key_Of (Hash : Fnv_Hash.Hash) return Word_Key is
     (Word_Key (Interfaces."and" (Hash, 16#FFFF_FFFF#)));

   --  A list, Index_Of (Text): each distinct word of Text once, in the
   --  order of its first occurrence, as an Entry_Lead (how many times Text
   --  holds it, its length, its Word_Key and its first Prefix_Bytes
   --  folded) and then the rest of its folded bytes.  Lists, Framed, stand
   --  back to back each led by its length (2 bytes).

   Entry_Lead_Bytes : constant := 16;
   Frame_Bytes      : constant := 2;
   Prefix_Bytes     : constant := 8;

   subtype Word_Prefix is Interfaces.Unsigned_64;
   --  A word's first Prefix_Bytes bytes, folded, NUL after a shorter
   --  word's last: two words of at most Prefix_Bytes bytes are the same
   --  word if and only if their lengths and prefixes are equal

   function Prefix_Of (Word : String) return Word_Prefix;
   --  The prefix of Word, folded already

   function Most_Words (Bytes : Natural) return Positive is
     (Bytes / (Min_Word + 1) + 1);
   --  The most words a text of Bytes bytes holds: a word takes Min_Word
   --  bytes and a byte that ends it

   function Table_Slots (Bytes : Natural) return Positive
   with Post => Table_Slots'Result >= 2 * Most_Words (Bytes);
   --  How many slots a table of the words of a text of Bytes bytes takes,
   --  by hash with open addressing: a power of two, at least twice the
   --  words, so that a probe ends soon at a free slot; sized by the text,
   --  since a short one (nearly every turn's) would pay for clearing a
   --  long one's table

   Max_Words : constant := Max_Recall_Bytes / (Min_Word + 1) + 1;

   Most_List_Bytes : constant :=
     Max_Words * Entry_Lead_Bytes + Max_Recall_Bytes;
   --  Every word's lead and, at most, all of the text's bytes

   function Index_Of (Text : String) return String
   with Pre => Is_Within (Text, Max_Recall_Bytes);
   --  Text's words as a list, of at most Most_List_Bytes; time linear in
   --  Text

   function Framed (List : String) return String;
   --  List (an Index_Of, at most Most_List_Bytes) led by its length

   function Frame_Length (Lists : String; At_Byte : Positive) return Natural
   with Inline;
   --  The length of the list framed at Lists (At_Byte)

   type Entry_Lead is record
      Times  : Interfaces.Unsigned_16;
      --  How many times the text holds the word
      Size   : Interfaces.Unsigned_16;
      --  How many bytes it has: those past its prefix follow the lead
      Key    : Word_Key;
      Prefix : Word_Prefix;
   end record
   with Size => 8 * Entry_Lead_Bytes;

   function Lead_At (List : String; At_Byte : Positive) return Entry_Lead
   with Inline;
   --  The lead of the entry of List at At_Byte; the rest of its word
   --  follows (Rest_Bytes), and the next entry after it

   function Rest_Bytes (Lead : Entry_Lead) return Natural is
     (Natural'Max (0, Natural (Lead.Size) - Prefix_Bytes));

private

   --  The frames, leads and prefixes are in the order of the machine's own
   --  words, read and written by one conversion each: a list lives in
   --  memory only (Organs.Morag.Excerpts.Encoded leaves it out), so it
   --  never meets a machine of another byte order.

   for Entry_Lead use record
      Times  at 0 range 0 .. 15;
      Size   at 2 range 0 .. 15;
      Key    at 4 range 0 .. 31;
      Prefix at 8 range 0 .. 63;
   end record;

   subtype Lead_Bytes is String (1 .. Entry_Lead_Bytes);
   subtype Prefix_Text is String (1 .. Prefix_Bytes);
   subtype Frame is String (1 .. Frame_Bytes);

end Organs.Morag.Words;
