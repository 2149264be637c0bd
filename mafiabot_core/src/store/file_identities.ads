--  Which file a path names now: its device and inode (stat(2)), so that
--  the store can tell whether the files at its paths are still the ones it
--  opened.  Linux on a 64-bit machine, where struct stat starts with
--  st_dev and st_ino, eight bytes each.

package File_Identities is

   type Identity is private;

   None : constant Identity;
   --  What a path that names no file gives

   function Of_Path (Path : String) return Identity;
   --  The file at Path, or None

private

   type Number is mod 2**64;

   type Identity is record
      Device : Number := 0;
      Inode  : Number := 0;
      Exists : Boolean := False;
   end record;

   None : constant Identity := (others => <>);

end File_Identities;
