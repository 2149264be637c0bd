--  Finds a member of a JSON object in the text it was parsed from, so a
--  request id can be echoed byte for byte: GNATCOLL.JSON turns
--  12345678901234567890 into a float and would print it back altered.

package Raw_Json is

   type Span is record
      First : Positive := 1;
      Last  : Natural := 0;
   end record;
   --  A slice of the scanned text; Last < First means "not found"

   function Member_Value (Document : String; Name : String) return Span
   with Pre => Document'Last < Integer'Last;
   --  The text of the value of the top-level member Name of Document, a
   --  JSON object that a parser has accepted.  Like GNATCOLL.JSON, the last
   --  of duplicate members wins.

end Raw_Json;
