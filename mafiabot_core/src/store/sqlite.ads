--  A thin binding of the few calls of SQLite's C interface the session
--  store uses, linked against Debian's libsqlite3 (libsqlite3-dev): its
--  static library in the default static build, its shared one otherwise.
--  Names and meanings are SQLite's own (https://sqlite.org/c3ref/); only
--  the session store (Session_Store) calls them.

with Interfaces;
with Interfaces.C;
with Interfaces.C.Strings;
with System;

package Sqlite is

   pragma Linker_Options ("-lsqlite3");
   pragma Linker_Options ("-lm");

   package C renames Interfaces.C;

   type Connection is new System.Address;
   type Statement is new System.Address;

   No_Connection : constant Connection := Connection (System.Null_Address);
   No_Statement  : constant Statement := Statement (System.Null_Address);

   subtype Result_Code is C.int;

   OK   : constant Result_Code := 0;
   Busy : constant Result_Code := 5;
   Read_Only : constant Result_Code := 8;
   Row  : constant Result_Code := 100;
   Done : constant Result_Code := 101;

   function Primary (Code : Result_Code) return Result_Code is
     (C."mod" (Code, 256));
   --  The primary code of an extended one (SQLITE_BUSY_SNAPSHOT is Busy)

   Open_Read_Write : constant C.int := 16#0000_0002#;
   Open_Create     : constant C.int := 16#0000_0004#;
   Open_No_Mutex   : constant C.int := 16#0000_8000#;
   --  The body is one thread: SQLite's own mutexes are not needed
   Open_Ex_Res_Code : constant C.int := 16#0200_0000#;

   Config_Single_Thread : constant C.int := 1;
   Config_Memory_Status : constant C.int := 9;

   function Config (Option : C.int) return Result_Code
   with Import, Convention => C_Variadic_1, External_Name => "sqlite3_config";

   function Config (Option : C.int; Value : C.int) return Result_Code
   with Import, Convention => C_Variadic_1, External_Name => "sqlite3_config";
   --  Only before SQLite is first used

   function Open_V2
     (Filename : C.char_array;
      Db       : out Connection;
      Flags    : C.int;
      Vfs      : C.Strings.chars_ptr := C.Strings.Null_Ptr) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_open_v2";

   function Close (Db : Connection) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_close_v2";

   function Busy_Timeout (Db : Connection; Milliseconds : C.int)
     return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_busy_timeout";

   function Errmsg (Db : Connection) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "sqlite3_errmsg";

   function Db_Readonly (Db : Connection; Name : C.char_array) return C.int
   with Import, Convention => C, External_Name => "sqlite3_db_readonly";
   --  1 read-only, 0 read-write, -1 no such database

   function Get_Autocommit (Db : Connection) return C.int
   with Import, Convention => C, External_Name => "sqlite3_get_autocommit";
   --  0 while a transaction is open

   function Sleep (Milliseconds : C.int) return C.int
   with Import, Convention => C, External_Name => "sqlite3_sleep";
   --  At least Milliseconds; what was slept, in milliseconds

   Fcntl_Data_Version : constant C.int := 35;
   --  SQLITE_FCNTL_DATA_VERSION: a number that changes with every commit to
   --  the file, this connection's or another process's

   Fcntl_Has_Moved : constant C.int := 20;
   --  SQLITE_FCNTL_HAS_MOVED: whether the file this connection has open is
   --  no longer the one at its path (removed, renamed, or another file put
   --  there), by comparing the inode of the open file with the path's

   Fcntl_Persist_Wal : constant C.int := 10;
   --  SQLITE_FCNTL_PERSIST_WAL: when 1, closing the connection leaves the
   --  WAL journal and its index where they are instead of removing them

   function File_Control
     (Db        : Connection;
      Schema    : C.char_array;
      Operation : C.int;
      Argument  : System.Address) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_file_control";

   function Last_Insert_Rowid (Db : Connection) return Interfaces.Integer_64
   with Import, Convention => C, External_Name => "sqlite3_last_insert_rowid";

   function Changes (Db : Connection) return C.int
   with Import, Convention => C, External_Name => "sqlite3_changes";

   function Prepare_V2
     (Db        : Connection;
      Sql       : C.char_array;
      Bytes     : C.int;
      Prepared  : out Statement;
      Tail      : System.Address := System.Null_Address) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_prepare_v2";

   function Finalize (Prepared : Statement) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_finalize";

   function Reset (Prepared : Statement) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_reset";

   function Step (Prepared : Statement) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_step";

   Static : constant System.Address := System.Null_Address;
   --  SQLITE_STATIC: SQLite reads a bound value where it lies, so it must
   --  stay there until the statement's bindings are cleared

   function Clear_Bindings (Prepared : Statement) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_clear_bindings";

   function Bind_Blob
     (Prepared : Statement;
      Index    : C.int;
      Value    : System.Address;
      Bytes    : C.int;
      Destroy  : System.Address) return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_bind_blob";

   function Bind_Int64
     (Prepared : Statement; Index : C.int; Value : Interfaces.Integer_64)
     return Result_Code
   with Import, Convention => C, External_Name => "sqlite3_bind_int64";

   function Column_Blob (Prepared : Statement; Column : C.int)
     return System.Address
   with Import, Convention => C, External_Name => "sqlite3_column_blob";

   function Column_Bytes (Prepared : Statement; Column : C.int) return C.int
   with Import, Convention => C, External_Name => "sqlite3_column_bytes";

   function Column_Int64 (Prepared : Statement; Column : C.int)
     return Interfaces.Integer_64
   with Import, Convention => C, External_Name => "sqlite3_column_int64";

   function Column_Text (Prepared : Statement; Column : C.int)
     return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "sqlite3_column_text";

end Sqlite;
