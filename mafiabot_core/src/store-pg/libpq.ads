--  A thin binding of the few calls of libpq, PostgreSQL's C client, that the
--  PostgreSQL session store uses, from Debian's shared libpq5: only the
--  dynamic build has it, for Debian ships neither GSSAPI's nor LDAP's
--  static libraries, which its libpq.a needs.  Names and meanings are
--  libpq's own (https://www.postgresql.org/docs/current/libpq.html); only
--  Session_Repositories.Postgres calls them.
--
--  The library is loaded when a store first asks for it (Load), not linked:
--  a body that keeps its sessions elsewhere never pays for it, and libpq
--  brings GSSAPI, LDAP and TLS, whose start-up took most of the dynamic
--  body's.

with Interfaces.C;
with Interfaces.C.Strings;
with System;

package Libpq is

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

   function Load return String;
   --  "" once libpq is loaded (it stays loaded), else why it cannot be, on
   --  one line.  Each call below is libpq's function of its comment's name,
   --  set by Load (null before it: a call then fails an access check, never
   --  calls into nothing).

   type Connect_Params_Call is access function
     (Keywords      : System.Address;
      Values        : System.Address;
      Expand_Dbname : C.int) return Connection
   with Convention => C;
   Connect_Params : Connect_Params_Call;  --  PQconnectdbParams
   --  Keywords and Values: null-terminated arrays of C strings.  With
   --  Expand_Dbname = 1 a "dbname" value that is a URL or a conninfo string
   --  is expanded, its parameters overriding those given before it

   type Finish_Call is access procedure (Conn : Connection)
   with Convention => C;
   Finish : Finish_Call;  --  PQfinish

   type Reset_Call is access procedure (Conn : Connection)
   with Convention => C;
   Reset : Reset_Call;  --  PQreset
   --  Close the connection and open it again with the same parameters

   type Status_Call is access function (Conn : Connection) return C.int
   with Convention => C;
   Status : Status_Call;  --  PQstatus

   type Transaction_Status_Call is access function
     (Conn : Connection) return C.int
   with Convention => C;
   Transaction_Status : Transaction_Status_Call;  --  PQtransactionStatus

   type Error_Message_Call is access function
     (Conn : Connection) return C.Strings.chars_ptr
   with Convention => C;
   Error_Message : Error_Message_Call;  --  PQerrorMessage

   type Db_Call is access function
     (Conn : Connection) return C.Strings.chars_ptr
   with Convention => C;
   Db : Db_Call;  --  PQdb

   type Host_Call is access function
     (Conn : Connection) return C.Strings.chars_ptr
   with Convention => C;
   Host : Host_Call;  --  PQhost

   type Port_Call is access function
     (Conn : Connection) return C.Strings.chars_ptr
   with Convention => C;
   Port : Port_Call;  --  PQport

   type Set_Notice_Processor_Call is access function
     (Conn      : Connection;
      Processor : System.Address;
      Argument  : System.Address) return System.Address
   with Convention => C;
   Set_Notice_Processor : Set_Notice_Processor_Call;  --  PQsetNoticeProcessor

   type Exec_Call is access function
     (Conn : Connection; Query : C.char_array) return Result
   with Convention => C;
   Exec : Exec_Call;  --  PQexec

   type Exec_Params_Call is access function
     (Conn          : Connection;
      Command       : C.char_array;
      Count         : C.int;
      Types         : System.Address;
      Values        : System.Address;
      Lengths       : System.Address;
      Formats       : System.Address;
      Result_Format : C.int) return Result
   with Convention => C;
   Exec_Params : Exec_Params_Call;  --  PQexecParams

   --  Pipeline mode (libpq 14 and later): statements are sent without
   --  waiting for each other's results, the server runs them in order up to
   --  a Sync, and the results are read in the same order

   type Enter_Pipeline_Mode_Call is access function
     (Conn : Connection) return C.int
   with Convention => C;
   Enter_Pipeline_Mode : Enter_Pipeline_Mode_Call;  --  PQenterPipelineMode
   --  1 when the connection is in pipeline mode now

   type Exit_Pipeline_Mode_Call is access function
     (Conn : Connection) return C.int
   with Convention => C;
   Exit_Pipeline_Mode : Exit_Pipeline_Mode_Call;  --  PQexitPipelineMode
   --  1 when it left it: every result read, the last one a Sync's

   type Send_Prepare_Call is access function
     (Conn      : Connection;
      Name      : C.char_array;
      Query     : C.char_array;
      Count     : C.int;
      Types     : System.Address) return C.int
   with Convention => C;
   Send_Prepare : Send_Prepare_Call;  --  PQsendPrepare
   --  1 when the statement Query is queued to be prepared as Name (its
   --  parameters' types inferred when Types is null), for the session

   type Send_Query_Prepared_Call is access function
     (Conn          : Connection;
      Name          : C.char_array;
      Count         : C.int;
      Values        : System.Address;
      Lengths       : System.Address;
      Formats       : System.Address;
      Result_Format : C.int) return C.int
   with Convention => C;
   Send_Query_Prepared : Send_Query_Prepared_Call;  --  PQsendQueryPrepared
   --  1 when the statement prepared as Name is queued with these
   --  parameters (copied: they need not outlive the call), as Exec_Params
   --  takes them; the server neither parses nor plans it again

   type Send_Pipeline_Sync_Call is access function
     (Conn : Connection) return C.int
   with Convention => C;
   Send_Pipeline_Sync : Send_Pipeline_Sync_Call;  --  PQpipelineSync
   --  Queue a Sync and send everything queued; 1 when sent

   type Pipeline_Status_Call is access function
     (Conn : Connection) return C.int
   with Convention => C;
   Pipeline_Status : Pipeline_Status_Call;  --  PQpipelineStatus

   type Get_Result_Call is access function (Conn : Connection) return Result
   with Convention => C;
   Get_Result : Get_Result_Call;  --  PQgetResult
   --  The next result, waiting for it; in pipeline mode each statement's
   --  result is followed by No_Result, and the Sync's by none

   type Result_Status_Call is access function (Res : Result) return C.int
   with Convention => C;
   Result_Status : Result_Status_Call;  --  PQresultStatus

   type Result_Error_Message_Call is access function
     (Res : Result) return C.Strings.chars_ptr
   with Convention => C;
   Result_Error_Message : Result_Error_Message_Call;  --  PQresultErrorMessage
   --  The error of the statement Res is the result of ("" if it succeeded)

   type Result_Error_Field_Call is access function
     (Res : Result; Field : C.int)
     return C.Strings.chars_ptr
   with Convention => C;
   Result_Error_Field : Result_Error_Field_Call;  --  PQresultErrorField

   type Tuples_Call is access function (Res : Result) return C.int
   with Convention => C;
   Tuples : Tuples_Call;  --  PQntuples

   type Get_Value_Call is access function (Res : Result; Row, Column : C.int)
     return System.Address
   with Convention => C;
   Get_Value : Get_Value_Call;  --  PQgetvalue

   type Get_Length_Call is access function
     (Res : Result; Row, Column : C.int) return C.int
   with Convention => C;
   Get_Length : Get_Length_Call;  --  PQgetlength

   type Get_Is_Null_Call is access function
     (Res : Result; Row, Column : C.int) return C.int
   with Convention => C;
   Get_Is_Null : Get_Is_Null_Call;  --  PQgetisnull

   type Clear_Call is access procedure (Res : Result)
   with Convention => C;
   Clear : Clear_Call;  --  PQclear

end Libpq;
