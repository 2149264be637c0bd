--  A MoRAG memory as the body keeps one in a value: a session's excerpts
--  back to back in one text, oldest first, numbered by the turns that
--  kept them.  The session table holds one beside each session, and the
--  store's record carries its bytes (Encoded, Decode) after the session's
--  own fields: this unit alone knows the representation.
--
--  The excerpts are those of consecutive turns, the newest that of
--  Newest_Turn: a turn kept after a gap (a turn that kept nothing) forgets
--  the older ones, so that every excerpt's number is exact while only one
--  number is kept.  That is what lets a record keep no number but the
--  session's count of turns (Decode's Newest_Turn).

private with Ada.Strings.Unbounded;

package Organs.Morag.Excerpts is

   type Excerpt_Memory is new Memory with private;
   --  Empty by default; a value (a tentative round works on a copy)

   Empty : constant Excerpt_Memory;

   overriding function Count (Held : Excerpt_Memory) return Natural;

   overriding function Excerpt
     (Held : Excerpt_Memory; Index : Recall_Count) return String;

   overriding procedure Read_Excerpt
     (Held    : Excerpt_Memory;
      Index   : Recall_Count;
      Process : not null access procedure (Excerpt : String));

   overriding function Turn_Of
     (Held : Excerpt_Memory; Index : Recall_Count) return Positive;

   overriding function Is_Readable (Held : Excerpt_Memory) return Boolean is
     (True);

   overriding procedure Keep
     (Held    : in out Excerpt_Memory;
      Turn    : Positive;
      Excerpt : String;
      Depth   : Recall_Count);

   overriding function Word_Index (Held : Excerpt_Memory) return String;

   overriding procedure Read_Word_Index
     (Held    : Excerpt_Memory;
      Process : not null access procedure (Index : String));

   overriding procedure Index_Words (Held : in out Excerpt_Memory);
   --  The index lives beside the texts in the value only: Encoded leaves
   --  it out and Decode gives a memory without it, which builds it from
   --  its texts when a ranking first asks

   --  Bytes, little-endian: the number of excerpts (1 byte: 0 ..
   --  Max_Depth), then each excerpt oldest first as its length (2 bytes: at
   --  most Max_Recall_Bytes) and its bytes, which are UTF-8 (they go back
   --  to the client in the recall step's detail); nothing after the last.

   Most_Encoded_Bytes : constant := 1 + Max_Depth * (2 + Max_Recall_Bytes);

   function Encoded (Held : Excerpt_Memory) return String
   with Post => Encoded'Result'Length in 1 .. Most_Encoded_Bytes;

   type Decode_Status is
     (Decoded,
      Malformed,
      --  Too short, too long, or a length out of its range
      Not_Utf8);
      --  An excerpt whose bytes are not UTF-8

   procedure Decode
     (Bytes       : String;
      Newest_Turn : Natural;
      Held        : out Excerpt_Memory;
      Status      : out Decode_Status);
   --  Held is the memory Bytes encode, its newest excerpt that of
   --  Newest_Turn, when Status is Decoded; else empty.  A memory of more
   --  excerpts than Newest_Turn turns is Malformed.

private

   type Excerpt_Length is range 0 .. Max_Recall_Bytes with Size => 16;
   type Excerpt_Lengths is array (Recall_Count) of Excerpt_Length
   with Component_Size => 16;

   --  One text holds the kept excerpts back to back, oldest first, each
   --  after its length as Encoded writes them (so that a record is that
   --  text after one byte, not a copy of every excerpt): a session costs
   --  one string and 32 bytes of lengths, not sixteen strings, which is
   --  what lets 100,000 sessions fit in 64 MB.  Their words' index, once
   --  asked for (Index_Words), is one more string.
   type Excerpt_Memory is new Memory with record
      Kept    : Ada.Strings.Unbounded.Unbounded_String;
      --  Each excerpt's length (2 bytes, little-endian) and its bytes
      Sizes   : Excerpt_Lengths := [others => 0];
      Count   : Natural range 0 .. Recall_Count'Last := 0;
      Newest  : Natural := 0;
      --  The turn of the newest excerpt, when Count > 0
      Indexed : Boolean := False;
      Index   : Ada.Strings.Unbounded.Unbounded_String;
      --  When Indexed, the Organs.Morag.Words index of the kept excerpts;
      --  else ""
   end record;

   Empty : constant Excerpt_Memory := (others => <>);

   overriding function Count (Held : Excerpt_Memory) return Natural is
     (Held.Count);

   overriding function Turn_Of
     (Held : Excerpt_Memory; Index : Recall_Count) return Positive is
     (Held.Newest - (Held.Count - Index));

end Organs.Morag.Excerpts;
