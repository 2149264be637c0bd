--  A thin binding of the few calls of libpq, PostgreSQL's C client, that the
--  PostgreSQL session store uses, linked against Debian's shared libpq5
--  (libpq-dev): only the dynamic build has it, for Debian ships neither
--  GSSAPI's nor LDAP's static libraries, which its libpq.a needs.  Names
--  and meanings are libpq's own
--  (https://www.postgresql.org/docs/current/libpq.html); only
--  Pg_Session_Store calls them.

with Interfaces.C;
with Interfaces.C.Strings;
with System;

package Libpq is

   pragma Linker_Options ("-lpq");

   package C renames Interfaces.C;

   type Connection is new System.Address;
   type Result is new System.Address;

   No_Connection : constant Connection := Connection (System.Null_Address);
   No_Result     : constant Result := Result (System.Null_Address);

   Connection_OK : constant C.int := 0;
   --  CONNECTION_OK of ConnStatusType; anything else is not usable

   Command_OK : constant C.int := 1;
   Tuples_OK  : constant C.int := 2;
   --  PGRES_COMMAND_OK, PGRES_TUPLES_OK of ExecStatusType: the successes

   Pipeline_Sync : constant C.int := 10;
   --  PGRES_PIPELINE_SYNC: the result that stands for a pipeline's Sync

   Transaction_Idle : constant C.int := 0;
   --  PQTRANS_IDLE: no transaction open

   Pipeline_Off : constant C.int := 0;
   --  PQ_PIPELINE_OFF of PGpipelineStatus: each statement waits for its
   --  result (Exec_Params may be called)

   Diag_Sqlstate : constant C.int := Character'Pos ('C');
   --  PG_DIAG_SQLSTATE, for Result_Error_Field

   Text_Format   : constant C.int := 0;
   Binary_Format : constant C.int := 1;

   function Connect_Params
     (Keywords      : System.Address;
      Values        : System.Address;
      Expand_Dbname : C.int) return Connection
   with Import, Convention => C, External_Name => "PQconnectdbParams";
   --  Keywords and Values: null-terminated arrays of C strings.  With
   --  Expand_Dbname = 1 a "dbname" value that is a URL or a conninfo string
   --  is expanded, its parameters overriding those given before it

   procedure Finish (Conn : Connection)
   with Import, Convention => C, External_Name => "PQfinish";

   procedure Reset (Conn : Connection)
   with Import, Convention => C, External_Name => "PQreset";
   --  Close the connection and open it again with the same parameters

   function Status (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQstatus";

   function Transaction_Status (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQtransactionStatus";

   function Error_Message (Conn : Connection) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQerrorMessage";

   function Db (Conn : Connection) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQdb";

   function Host (Conn : Connection) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQhost";

   function Port (Conn : Connection) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQport";

   function Set_Notice_Processor
     (Conn      : Connection;
      Processor : System.Address;
      Argument  : System.Address) return System.Address
   with Import, Convention => C, External_Name => "PQsetNoticeProcessor";

   function Exec (Conn : Connection; Query : C.char_array) return Result
   with Import, Convention => C, External_Name => "PQexec";

   function Exec_Params
     (Conn          : Connection;
      Command       : C.char_array;
      Count         : C.int;
      Types         : System.Address;
      Values        : System.Address;
      Lengths       : System.Address;
      Formats       : System.Address;
      Result_Format : C.int) return Result
   with Import, Convention => C, External_Name => "PQexecParams";

   --  Pipeline mode (libpq 14 and later): statements are sent without
   --  waiting for each other's results, the server runs them in order up to
   --  a Sync, and the results are read in the same order

   function Enter_Pipeline_Mode (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQenterPipelineMode";
   --  1 when the connection is in pipeline mode now

   function Exit_Pipeline_Mode (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQexitPipelineMode";
   --  1 when it left it: every result read, the last one a Sync's

   function Send_Prepare
     (Conn      : Connection;
      Name      : C.char_array;
      Query     : C.char_array;
      Count     : C.int;
      Types     : System.Address) return C.int
   with Import, Convention => C, External_Name => "PQsendPrepare";
   --  1 when the statement Query is queued to be prepared as Name (its
   --  parameters' types inferred when Types is null), for the session

   function Send_Query_Prepared
     (Conn          : Connection;
      Name          : C.char_array;
      Count         : C.int;
      Values        : System.Address;
      Lengths       : System.Address;
      Formats       : System.Address;
      Result_Format : C.int) return C.int
   with Import, Convention => C, External_Name => "PQsendQueryPrepared";
   --  1 when the statement prepared as Name is queued with these
   --  parameters (copied: they need not outlive the call), as Exec_Params
   --  takes them; the server neither parses nor plans it again

   function Send_Pipeline_Sync (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQpipelineSync";
   --  Queue a Sync and send everything queued; 1 when sent

   function Pipeline_Status (Conn : Connection) return C.int
   with Import, Convention => C, External_Name => "PQpipelineStatus";

   function Get_Result (Conn : Connection) return Result
   with Import, Convention => C, External_Name => "PQgetResult";
   --  The next result, waiting for it; in pipeline mode each statement's
   --  result is followed by No_Result, and the Sync's by none

   function Result_Status (Res : Result) return C.int
   with Import, Convention => C, External_Name => "PQresultStatus";

   function Result_Error_Message (Res : Result) return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQresultErrorMessage";
   --  The error of the statement Res is the result of ("" if it succeeded)

   function Result_Error_Field (Res : Result; Field : C.int)
     return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "PQresultErrorField";

   function Tuples (Res : Result) return C.int
   with Import, Convention => C, External_Name => "PQntuples";

   function Get_Value (Res : Result; Row, Column : C.int)
     return System.Address
   with Import, Convention => C, External_Name => "PQgetvalue";

   function Get_Length (Res : Result; Row, Column : C.int) return C.int
   with Import, Convention => C, External_Name => "PQgetlength";

   function Get_Is_Null (Res : Result; Row, Column : C.int) return C.int
   with Import, Convention => C, External_Name => "PQgetisnull";

   procedure Clear (Res : Result)
   with Import, Convention => C, External_Name => "PQclear";

end Libpq;
