--  A session's record (Session_Table.Session) and its MoRAG memory
--  (Organs.Morag.Excerpts) as bytes, for a store kept outside the body
--  (Session_Store).  The bytes start with a format
--  version; Decode reads only its own version, and every record it accepts
--  is one Encoded could have written: a damaged or foreign record is a
--  status, never an exception and never a half-read session.
--
--  Format 1, little-endian: version (1 byte), turns (4), energy level in
--  thousandths (2), held (1: 0 or 1), draw state (8), then the memory's
--  own bytes (Organs.Morag.Excerpts.Encoded: the memory owns its format,
--  this unit only places it), to the record's end.  The memory keeps no
--  turn numbers: its newest excerpt is the record's turn's.

with Organs.Morag.Excerpts;
with Session_Table;

package Session_Records is

   Format_Version : constant := 1;

   Session_Bytes : constant := 16;
   --  Everything before the memory's bytes

   Fixed_Bytes : constant := Session_Bytes + 1;
   --  The shortest record: an empty memory is one byte

   function Encoded
     (State  : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory) return String
   with Post => Encoded'Result'Length >= Fixed_Bytes
                and then Encoded'Result (Encoded'Result'First)
                         = Character'Val (Format_Version);

   type Decode_Status is
     (Decoded,
      Other_Version,
      --  The first byte names a format this body does not read
      Malformed,
      --  Too short, too long, or a field out of its range
      Not_Utf8);
      --  A kept excerpt whose bytes are not UTF-8

   procedure Decode
     (Bytes  : String;
      State  : out Session_Table.Session;
      Memory : out Organs.Morag.Excerpts.Excerpt_Memory;
      Status : out Decode_Status);
   --  State and Memory are Bytes' session when Status is Decoded, else an
   --  empty record (no turns, the default reservoir, draw state 0) and an
   --  empty memory

   function Explanation (Status : Decode_Status) return String;
   --  What a status says, for a message naming the session's store

end Session_Records;
