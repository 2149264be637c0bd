--  The words a MoRAG ranking counts, and an inverted index of the words of
--  a memory's kept excerpts (Added), which the memory keeps beside its
--  texts, so that a recall reads each distinct word of the session once,
--  with the excerpts that hold it, instead of every excerpt's text.
--
--  Words are those of Organs.Word_Search: maximal runs of Is_Word_Byte
--  bytes, Min_Word_Bytes or more, ASCII folded (Folded).  The index names a
--  word by its folded bytes as well as by a hash, so that two words of one
--  hash are never counted as one: whoever matches on the hash compares the
--  bytes (Fnv_Hash is no defence against chosen collisions).

--  Checked in every build, the unchecked one too: the bodies suppress
--  index checks on the strength of these preconditions
pragma Assertion_Policy (Pre => Check);

with Ada.Unchecked_Conversion;
with Fnv_Hash;
with Interfaces;
with Organs.Word_Search;

package Organs.Morag.Words is

   Min_Word : constant := Organs.Word_Search.Min_Word_Bytes;

   subtype Word_Key is Interfaces.Unsigned_32;
   --  The low half of a word's hash: what an index keeps of it

   function Key_Of (Hash : Fnv_Hash.Hash) return Word_Key is
     (Word_Key (Interfaces."and" (Hash, 16#FFFF_FFFF#)));

   Prefix_Bytes : constant := 8;

   subtype Word_Prefix is Interfaces.Unsigned_64;
   --  A word's first Prefix_Bytes bytes, folded, its byte K (from 0) in
   --  bits 8K .. 8K + 7, zero past a shorter word's last: two words of at
   --  most Prefix_Bytes bytes are the same word if and only if their
   --  lengths and prefixes are equal

   function Most_Words (Bytes : Natural) return Positive is
     (Bytes / (Min_Word + 1) + 1);
   --  The most words a text of Bytes bytes holds: a word takes Min_Word
   --  bytes and a byte that ends it

   function Is_Power_Of_Two (Count : Positive) return Boolean is
     (Interfaces."=" (Interfaces."and" (Interfaces.Unsigned_32 (Count),
                                       Interfaces.Unsigned_32 (Count - 1)),
                      0));

   function Table_Slots (Bytes : Natural) return Positive
   with Post => Table_Slots'Result >= 2 * Most_Words (Bytes)
                and then Is_Power_Of_Two (Table_Slots'Result);
   --  How many slots a table of the words of a text of Bytes bytes takes,
   --  by hash with open addressing: a power of two, at least twice the
   --  words, so that a probe ends soon at a free slot; sized by the text,
   --  since a short one (nearly every turn's) would pay for clearing a
   --  long one's table

   ---------------------------------------------------------------------
   --  A text's distinct words, found in one pass (Collect): a recall's
   --  query, and what an excerpt adds to an index

   type Word_Set (Most : Positive; Slots : Positive) is limited private;
   --  Declare one as Word_Set (Most_Words (L), Table_Slots (L)) for a text
   --  of L bytes

   procedure Collect (Text : String; Set : out Word_Set)
   with Pre => Set.Most = Most_Words (Text'Length)
               and then Set.Slots = Table_Slots (Text'Length);
   --  Set is Text's words, each once, numbered 1 .. Distinct (Set) in the
   --  order of their first occurrence; Set refers to Text, which the
   --  calls below are given again

   function Distinct (Set : Word_Set) return Natural with Inline;

   ---------------------------------------------------------------------
   --  An index: the words of a memory's kept excerpts (at most Max_Depth,
   --  each at most Max_Recall_Bytes), oldest first, as one string built by
   --  Added only:
   --  - how many excerpts it indexes (1 byte), the newest one's number (1
   --    byte: each excerpt Added is numbered one more than the one before,
   --    modulo 256), then each one's count of word occurrences (2 bytes),
   --    oldest first;
   --  - then each distinct word once, in no order a reader may rely on:
   --    its Term_Lead (how many excerpts hold it, its length, its Word_Key
   --    and its first Prefix_Bytes folded), the rest of its folded bytes,
   --    and for each excerpt holding it, oldest first, a posting of 2
   --    bytes: the excerpt's number and how many times it holds the word,
   --    less one (at most Most_Words (Max_Recall_Bytes), 256, times: one
   --    byte).  Numbers, not ages, so that the postings an excerpt keeps
   --    are copied as they are when a newer one is added; oldest first, so
   --    that the forgotten ones lead and the new one follows, and a word's
   --    postings that stay are copied with the bytes around them.

   Empty_Index : constant String;

   function Added
     (Index : String; Keeping : Natural; Text : String) return String
   with Pre => Keeping < Max_Depth
               and then Keeping <= Texts_Of (Index)
               and then Is_Within (Text, Max_Recall_Bytes),
        Post => Texts_Of (Added'Result) = Keeping + 1;
   --  Index with its newest Keeping excerpts only, and Text as the newest:
   --  time linear in Index and Text

   function Texts_Of (Index : String) return Natural
   with Inline, Pre => Index'Length >= Empty_Index'Length;
   --  How many excerpts Index indexes

   function Word_Count (Index : String; Text : Positive) return Natural
   with Inline, Pre => Text <= Texts_Of (Index);
   --  How many word occurrences the Text-th excerpt, oldest first, holds

   function First_Term (Index : String) return Positive
   with Inline, Pre => Index'Length >= Empty_Index'Length;
   --  Where the first word's lead stands (past Index'Last: none)

   Term_Lead_Bytes : constant := 16;
   Posting_Bytes   : constant := 2;

   type Term_Lead is record
      Postings : Interfaces.Unsigned_16;
      --  How many excerpts hold the word
      Size     : Interfaces.Unsigned_16;
      --  How many bytes it has: those past its prefix follow the lead
      Key      : Word_Key;
      Prefix   : Word_Prefix;
   end record
   with Size => 8 * Term_Lead_Bytes;

   --  The word whose lead stands at At_Byte of an index (At_Byte from
   --  First_Term, then Next_Term until past Index'Last): a walk reads its
   --  lead once (Lead_At), and finds the rest from it

   function Lead_At (Index : String; At_Byte : Positive) return Term_Lead
   with Inline;
   --  Its lead

   function Postings_At (At_Byte : Positive; Lead : Term_Lead) return Positive
   is (At_Byte + Term_Lead_Bytes
       + Natural'Max (0, Natural (Lead.Size) - Prefix_Bytes));
   --  Where the postings of the word whose lead is Lead stand

   function Next_Term (At_Byte : Positive; Lead : Term_Lead) return Positive
   is (Postings_At (At_Byte, Lead)
       + Posting_Bytes * Natural (Lead.Postings));
   --  Where the next word's lead stands

   function Age_At (Index : String; At_Byte : Positive) return Natural
   with Inline;
   --  The age of the excerpt whose posting is at At_Byte (0: the newest)

   function Times_At (Index : String; At_Byte : Positive) return Positive
   is (Character'Pos (Index (At_Byte + 1)) + 1);
   --  How many times that excerpt holds the word

   function Find
     (Set     : Word_Set;
      Text    : String;
      Index   : String;
      At_Byte : Positive;
      Lead    : Term_Lead) return Natural;
   pragma Inline_Always (Find);
   --  The distinct word of Set (collected from Text) that is the word of
   --  Index whose lead, at At_Byte, is Lead (Lead_At's), or 0 for none (inlined always:
   --  a walk over an index calls it for every word, and the call costs
   --  more than the look-up most of the time)

private

   type Slot_Table is array (Positive range <>) of Natural;

   type Word_Entry is record
      Key    : Word_Key;
      First  : Positive;
      Last   : Positive;
      Times  : Positive;
      Prefix : Word_Prefix;
   end record;
   --  A distinct word: Text (First .. Last), folded, Times times in Text;
   --  no defaults, so that declaring a set clears only its table

   type Word_Entries is array (Positive range <>) of Word_Entry;

   type Word_Set (Most : Positive; Slots : Positive) is limited record
      Distinct : Natural := 0;
      Total    : Natural := 0;
      Words    : Word_Entries (1 .. Most);
      --  One record a word, so that each of its fields is one offset away
      Table    : Slot_Table (1 .. Slots);
      --  0: a free slot, else the distinct word whose key leads there (a
      --  key K leads to slot (K and (Slots - 1)) + 1, probing onwards)
   end record;

   function Distinct (Set : Word_Set) return Natural is (Set.Distinct);

   Header_Bytes : constant := 2;
   Count_Bytes  : constant := 2;

   Empty_Index : constant String := [1 .. Header_Bytes => Character'Val (0)];

   function Age_At (Index : String; At_Byte : Positive) return Natural is
     ((Character'Pos (Index (Index'First + 1))
       - Character'Pos (Index (At_Byte))) mod 256);

   function Texts_Of (Index : String) return Natural is
     (Character'Pos (Index (Index'First)));

   function Word_Count (Index : String; Text : Positive) return Natural is
     (Character'Pos (Index (Index'First + Header_Bytes
                            + Count_Bytes * (Text - 1)))
      + 256 * Character'Pos (Index (Index'First + Header_Bytes
                                    + Count_Bytes * (Text - 1) + 1)));

   function First_Term (Index : String) return Positive is
     (Index'First + Header_Bytes + Count_Bytes * Texts_Of (Index));

   --  The leads and prefixes are in the order of the machine's own words,
   --  read and written by one conversion each: an index lives in memory
   --  only (Organs.Morag.Excerpts.Encoded leaves it out), so it never
   --  meets a machine of another byte order.

   Postings_Offset : constant := 0;
   Size_Offset     : constant := 2;
   Key_Offset      : constant := 4;
   Prefix_Offset   : constant := 8;
   --  Where each field of a lead stands

   for Term_Lead use record
      Postings at Postings_Offset range 0 .. 15;
      Size     at Size_Offset range 0 .. 15;
      Key      at Key_Offset range 0 .. 31;
      Prefix   at Prefix_Offset range 0 .. 63;
   end record;

   subtype Half_Bytes is String (1 .. 2);

   subtype Lead_Bytes is String (1 .. Term_Lead_Bytes);

   function To_Lead is new Ada.Unchecked_Conversion (Lead_Bytes, Term_Lead);

   function Lead_At (Index : String; At_Byte : Positive) return Term_Lead is
     (To_Lead (Index (At_Byte .. At_Byte + Term_Lead_Bytes - 1)));

end Organs.Morag.Words;
