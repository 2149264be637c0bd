--  A session's record (Session_Table.Session) as bytes, for a store kept
--  outside the body (Session_Store).  The bytes start with a format
--  version; Decode reads only its own version, and every record it accepts
--  is one Encoded could have written: a damaged or foreign record is a
--  status, never an exception and never a half-read session.
--
--  Format 1, little-endian: version (1 byte), turns (4), energy level in
--  thousandths (2), held (1: 0 or 1), draw state (8), the number of kept
--  excerpts (1: 0 .. Organs.Morag.Max_Depth), then each excerpt oldest
--  first as its length (2: at most Organs.Morag.Max_Recall_Bytes) and its
--  bytes, which are UTF-8 (they go back to the client in the recall step's
--  detail); nothing after the last.

with Session_Table;

package Session_Records is

   Format_Version : constant := 1;

   Fixed_Bytes : constant := 17;
   --  Everything before the excerpts

   function Encoded (State : Session_Table.Session) return String
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
      Status : out Decode_Status);
   --  State is Bytes' session when Status is Decoded, else an empty record
   --  (no turns, the default reservoir, draw state 0, no memory)

   function Explanation (Status : Decode_Status) return String;
   --  What a status says, for a message naming the session's store

end Session_Records;
