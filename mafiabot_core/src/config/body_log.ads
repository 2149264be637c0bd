--  Diagnostics on stderr.  stdout belongs to the protocol alone.

package Body_Log is

   procedure Info (Message : String);
   procedure Warning (Message : String);
   procedure Error (Message : String);

end Body_Log;
