with Interfaces.C;

package body File_Identities is

   pragma Compile_Time_Error
     (Standard'Address_Size /= 64,
      "struct stat is read as Linux lays it out on 64-bit machines");

   type Stat_Buffer is array (1 .. 32) of Number
   with Convention => C;
   --  256 bytes: room for any 64-bit Linux struct stat (144 on x86_64)

   function C_Stat
     (Path : Interfaces.C.char_array; Buffer : out Stat_Buffer)
     return Interfaces.C.int
   with Import, Convention => C, External_Name => "stat";

   function Of_Path (Path : String) return Identity is
      use type Interfaces.C.int;
      Buffer : Stat_Buffer := [others => 0];
   begin
      if C_Stat (Interfaces.C.To_C (Path), Buffer) /= 0 then
         return None;
      end if;
      return (Device => Buffer (1), Inode => Buffer (2), Exists => True);
   end Of_Path;

end File_Identities;
