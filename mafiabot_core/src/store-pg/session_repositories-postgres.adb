with Ada.Unchecked_Conversion;
with Interfaces.C.Strings;
with System;
with Body_Log;
with Libpq;
with Organs.Drive_Box;
with Organs.Morag.Excerpts;
with Session_Records;
with Session_Table;
with Wall_Clocks;

package body Session_Repositories.Postgres is

   use Ada.Strings.Unbounded;
   use type Interfaces.C.int;
   use type Interfaces.Integer_64;
   use type Interfaces.Unsigned_64;
   use type Libpq.Connection;
   use type Libpq.Result;

   package C renames Interfaces.C;

   Lock_Namespace : constant := 16#6D61_6610#;
   --  The first key of the body's advisory locks: apart from the
   --  harness's namespaces on the same database (harness/database.py,
   --  16#6D61_6601# .. 16#6D61_6604#)

   Schema_Lock : constant := 0;

   Version_Text : constant String := "1";
   --  Schema_Version as body_meta holds it

   pragma Compile_Time_Error
     (Schema_Version /= 1, "Version_Text spells Schema_Version");
   --  The second key of the lock Open makes or migrates the schema under

   type Sql_Text is access constant String;

   Migrations : constant array (1 .. Schema_Version) of Sql_Text :=
     [1 => new String'
        ("CREATE TABLE body_meta (name text PRIMARY KEY, value text NOT NULL);"
         & "CREATE TABLE body_sessions (key bytea PRIMARY KEY,"
         & " record bytea NOT NULL, used bigint NOT NULL);"
         --  used: the rank of use, from a sequence every kept turn draws
         --  from; its index finds the least recently used
         & "CREATE INDEX body_sessions_by_use ON body_sessions (used);"
         & "CREATE SEQUENCE body_session_use;"
         & "CREATE TABLE body_tally (one integer PRIMARY KEY CHECK (one = 1),"
         & " sessions bigint NOT NULL);"
         & "INSERT INTO body_tally VALUES (1, 0);"
         --  Every insert and delete of a session, a body's or an
         --  operator's by hand, keeps the tally; an update fires none
         & "CREATE FUNCTION body_count_sessions () RETURNS trigger"
         & " LANGUAGE plpgsql AS $$ BEGIN"
         & " UPDATE body_tally SET sessions = sessions"
         & " + CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;"
         & " RETURN NULL; END $$;"
         & "CREATE TRIGGER body_counted AFTER INSERT OR DELETE ON body_sessions"
         & " FOR EACH ROW EXECUTE FUNCTION body_count_sessions ();"
         & "CREATE TABLE body_budget_calls (key bytea NOT NULL"
         & " REFERENCES body_sessions (key) ON DELETE CASCADE,"
         & " ended_ms bigint NOT NULL, calls bigint NOT NULL,"
         & " tokens bigint NOT NULL);"
         & "CREATE INDEX body_budget_calls_by_key ON body_budget_calls"
         & " (key, ended_ms);"
         & "INSERT INTO body_meta VALUES ('schema_version', '0');")];
   --  Append-only: Migrations (V) takes a database of version V - 1 to V
   --  (a new database is of version 0); once released, never edited

   type Turn_Statement is
     (Begin_Turn, Lock_Session, Read_Record, Read_Record_To_Write,
      Read_Budget, Write_Record, Forget_Budget, Log_Budget,
      Evict_Past_Capacity, Commit_Turn);
   --  The statements of a turn, prepared once a connection (Prepare_Turns),
   --  so that the server parses and plans each once, not at every turn

   Turn_Sql : constant array (Turn_Statement) of Sql_Text :=
     [Begin_Turn => new String'("BEGIN"),
      Lock_Session => new String'
        ("SELECT pg_advisory_xact_lock (" & Lock_Namespace'Image
         & ", hashtext (encode ($1, 'hex')))"),
      --  Two sessions whose keys share a hash only wait for each other
      Read_Record => new String'
        ("SELECT record FROM body_sessions WHERE key = $1"),
      Read_Record_To_Write => new String'
        ("SELECT record FROM body_sessions WHERE key = $1 FOR UPDATE"),
      --  The row locked until the turn commits: another body's eviction
      --  (SKIP LOCKED) passes it over, so a session found is updated by
      --  the turn's write, never inserted again, and only a turn that found
      --  no record makes a session (and evicts past the capacity)
      Read_Budget => new String'
        ("SELECT ended_ms, calls, tokens FROM body_budget_calls"
         & " WHERE key = $1 ORDER BY ended_ms"),
      Write_Record => new String'
        ("INSERT INTO body_sessions (key, record, used)"
         & " VALUES ($1, $2, nextval ('body_session_use'))"
         & " ON CONFLICT (key) DO UPDATE"
         & " SET record = excluded.record, used = excluded.used"),
      Forget_Budget => new String'
        ("DELETE FROM body_budget_calls WHERE key = $1"),
      Log_Budget => new String'
        ("INSERT INTO body_budget_calls (key, ended_ms, calls, tokens)"
         & " SELECT $1, * FROM unnest ($2::bigint[], $3::bigint[],"
         & " $4::bigint[])"),
      Evict_Past_Capacity => new String'
        ("WITH gone AS (DELETE FROM body_sessions WHERE key IN"
         & " (SELECT key FROM body_sessions ORDER BY used LIMIT greatest (0,"
         & " (SELECT sessions FROM body_tally) - $1::bigint)"
         & " FOR UPDATE SKIP LOCKED) RETURNING 1)"
         & " SELECT count (*) FROM gone"),
      --  After a new session's write, in its batch: the tally counted by
      --  the write's trigger (the statement after it reads it)
      Commit_Turn => new String'("COMMIT")];

   function Name_Of (Statement : Turn_Statement) return String is
     ("mafiabot_" & Turn_Statement'Image (Statement));
   --  What the session knows Statement by once prepared

   Lock_Failed : constant String :=
     "cannot lock the session (another body's turn of it held the lock"
     & " past --state-busy-ms, or the server refused)";

   Lost_Note : constant String :=
     " (the connection to the server was lost: nothing of this turn was"
     & " kept; the next turn connects again)";

   Commit_Lost_Note : constant String :=
     " (the connection to the server was lost while the turn's COMMIT was"
     & " on its way: the server may or may not have kept this turn, and if"
     & " it did, the session's next turn is one later; the next turn"
     & " connects again)";
   --  The server may have made the commit durable and died before it said
   --  so: a client must not be told that nothing was kept

   type Record_Read is record
      Found : Boolean := False;
      Bytes : Unbounded_String;
      --  When Found: the record's bytes as read
   end record;

   type Pg_Repository is limited new Repository with record
      Conn          : Libpq.Connection := Libpq.No_Connection;
      Server        : Unbounded_String;
      --  Host, port and database, for every failure's line
      Capacity      : Positive := 10_000;
      Busy_Timeout_Ms : Positive := 5_000;
      Keeps_Budgets : Boolean := False;
      In_Batch      : Boolean := False;
      --  In libpq's pipeline mode, between Open_Batch and Close_Batch
      Queued, Taken : Natural := 0;
      --  The open batch's statements sent, and those whose results were
      --  taken
      Synced        : Boolean := False;
      --  Whether the open batch's Sync was sent
      Writes        : Boolean := False;
      --  Whether the open batch holds the session's write
      Commit_At     : Natural := 0;
      --  The open batch's COMMIT among its statements (0: none queued)
      Refused_Before_Commit : Boolean := False;
      --  Whether the server refused a statement of the open batch before
      --  its COMMIT, which then cannot have kept anything
      Prepared      : Boolean := False;
      --  Whether the connection has the turn's statements prepared
   end record;

   overriding procedure Within_Turn
     (Self        : in out Pg_Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status);

   overriding procedure Close (Self : in out Pg_Repository);

   type Pg_Access is access all Pg_Repository;

   --  -- Talking to the server -------------------------------------------

   type Param is record
      Value  : access constant String;
      --  Read by libpq during the one call it is given to (Execute, or
      --  Queue, which copies it into the batch), so a local object's
      --  'Unchecked_Access is safe: it outlives that call
      Binary : Boolean := True;
      --  Else text, ending in a NUL (libpq reads it as a C string)
   end record;

   type Param_List is array (Positive range <>) of Param;

   Empty_Bytes : aliased constant String := "-";
   --  Where an empty bytea points: libpq takes a null pointer for NULL

   function Text_Param (Value : access constant String) return Param is
     ((Value => Value, Binary => False));

   function Bytes_Param (Value : access constant String) return Param is
     ((Value => Value, Binary => True));

   function Spelled (Number : Interfaces.Integer_64) return String is
     (Interfaces.Integer_64'Image (Number) & ASCII.NUL);
   --  A text parameter's spelling (the leading blank is PostgreSQL's to
   --  skip)

   function Text_Of (Text : C.Strings.chars_ptr) return String is
     (if C.Strings."=" (Text, C.Strings.Null_Ptr) then ""
      else C.Strings.Value (Text));

   --  A libpq message on one line: its messages end in, and may hold, line
   --  feeds
   function One_Line (Text : C.Strings.chars_ptr) return String is
      Message : String := Text_Of (Text);
      Last    : Natural := Message'Last;
   begin
      while Last >= Message'First
        and then Message (Last) in ASCII.LF | ASCII.CR | ' '
      loop
         Last := Last - 1;
      end loop;
      for Each of Message (Message'First .. Last) loop
         if Each in ASCII.LF | ASCII.CR | ASCII.HT then
            Each := ' ';
         end if;
      end loop;
      return Message (Message'First .. Last);
   end One_Line;

   function Last_Error (Self : Pg_Repository) return String is
     (One_Line (Libpq.Error_Message (Self.Conn)));
   --  The connection's last error

   function Is_Connected (Self : Pg_Repository) return Boolean is
     (Self.Conn /= Libpq.No_Connection
      and then Libpq.Status (Self.Conn) = Libpq.Connection_OK);

   --  Given as libpq takes parameters (arrays of addresses, lengths and
   --  formats, every result binary), with Sql run, Res its result (when
   --  Prepared is ""); or with the statement prepared as Prepared queued in
   --  the batch, Accepted saying whether it was
   procedure Call
     (Self     : Pg_Repository;
      Sql      : String;
      Prepared : String;
      Given    : Param_List;
      Res      : out Libpq.Result;
      Accepted : out Boolean)
   is
      type Address_Array is array (Given'Range) of System.Address
      with Convention => C;
      type Int_Array is array (Given'Range) of C.int
      with Convention => C;
      Values  : Address_Array;
      Lengths : Int_Array;
      Formats : Int_Array;
      function Or_None (Where : System.Address) return System.Address is
        (if Given'Length = 0 then System.Null_Address else Where);
   begin
      for Index in Given'Range loop
         Values (Index) :=
           (if Given (Index).Value'Length = 0 then Empty_Bytes'Address
            else Given (Index).Value.all'Address);
         Lengths (Index) := C.int (Given (Index).Value'Length);
         Formats (Index) :=
           (if Given (Index).Binary then Libpq.Binary_Format
            else Libpq.Text_Format);
      end loop;
      Res := Libpq.No_Result;
      if Prepared /= "" then
         Accepted := Libpq.Send_Query_Prepared
           (Self.Conn, C.To_C (Prepared), C.int (Given'Length),
            Or_None (Values'Address), Or_None (Lengths'Address),
            Or_None (Formats'Address), Libpq.Binary_Format) = 1;
      else
         Res := Libpq.Exec_Params
           (Self.Conn, C.To_C (Sql), C.int (Given'Length), System.Null_Address,
            Or_None (Values'Address), Or_None (Lengths'Address),
            Or_None (Formats'Address), Libpq.Binary_Format);
         Accepted := True;
      end if;
   end Call;

   --  Sql run, waiting for its result (outside a batch)
   function Execute
     (Self  : Pg_Repository;
      Sql   : String;
      Given : Param_List := []) return Libpq.Result
   is
      Res      : Libpq.Result;
      Accepted : Boolean;
   begin
      Call (Self, Sql, "", Given, Res, Accepted);
      return Res;
   end Execute;

   --  Whether the prepared Statement was queued in the batch
   function Sent
     (Self      : Pg_Repository;
      Statement : Turn_Statement;
      Given     : Param_List) return Boolean
   is
      Res      : Libpq.Result;
      Accepted : Boolean;
   begin
      Call (Self, "", Name_Of (Statement), Given, Res, Accepted);
      return Accepted;
   end Sent;

   function Succeeded (Res : Libpq.Result) return Boolean is
     (Libpq."/=" (Res, Libpq.No_Result)
      and then Libpq.Result_Status (Res) in Libpq.Command_OK
                                          | Libpq.Tuples_OK);

   function Has_Row (Res : Libpq.Result) return Boolean is
     (Libpq.Tuples (Res) > 0);

   function Cell_Length (Res : Libpq.Result; Row, Column : Natural)
     return Natural is
     (Natural (Libpq.Get_Length (Res, C.int (Row), C.int (Column))));

   --  A column of a binary result as its bytes
   function Cell (Res : Libpq.Result; Row, Column : Natural) return String is
      Bytes : constant String (1 .. Cell_Length (Res, Row, Column))
      with Import,
           Address => Libpq.Get_Value (Res, C.int (Row), C.int (Column));
   begin
      return Bytes;
   end Cell;

   function As_Signed is new Ada.Unchecked_Conversion
     (Interfaces.Unsigned_64, Interfaces.Integer_64);

   --  A bigint column of a binary result: eight bytes, most significant
   --  first; anything else reads as 0
   function Int8 (Res : Libpq.Result; Row, Column : Natural)
     return Interfaces.Integer_64
   is
      Bytes : constant String := Cell (Res, Row, Column);
      Value : Interfaces.Unsigned_64 := 0;
   begin
      if Bytes'Length /= 8 then
         return 0;
      end if;
      for Each of Bytes loop
         Value := Interfaces.Shift_Left (Value, 8)
                  or Interfaces.Unsigned_64 (Character'Pos (Each));
      end loop;
      return As_Signed (Value);
   end Int8;

   function Failure (Self : Pg_Repository; Reason : String) return Status is
     ((Failed => True,
       Reason => Self.Server & ": " & To_Unbounded_String (Reason)));

   --  Undo the open transaction, if any (a lost connection has none left:
   --  the server rolled it back)
   procedure Roll_Back (Self : Pg_Repository) is
   begin
      if Is_Connected (Self)
        and then Libpq.Transaction_Status (Self.Conn)
                 /= Libpq.Transaction_Idle
      then
         Libpq.Clear (Execute (Self, "ROLLBACK"));
      end if;
   end Roll_Back;

   --  Res failed: Result says so (What, and the server's words), the
   --  transaction is rolled back and Res cleared
   procedure Fail
     (Self   : Pg_Repository;
      Res    : Libpq.Result;
      What   : String;
      Result : out Status)
   is
      Reason : constant String := What & ": " & Last_Error (Self);
   begin
      Libpq.Clear (Res);
      if Is_Connected (Self) then
         Result := Failure (Self, Reason);
         Roll_Back (Self);
      else
         Result := Failure (Self, Reason & Lost_Note);
      end if;
   end Fail;

   --  Run Sql, which returns nothing the caller reads
   procedure Run
     (Self   : Pg_Repository;
      Sql    : String;
      What   : String;
      Result : in out Status;
      Given  : Param_List := [])
   is
      Res : Libpq.Result;
   begin
      if Result.Failed then
         return;
      end if;
      Res := Execute (Self, Sql, Given);
      if Succeeded (Res) then
         Libpq.Clear (Res);
      else
         Fail (Self, Res, What, Result);
      end if;
   end Run;

   procedure Ignore_Notice
     (Argument : System.Address; Message : C.Strings.chars_ptr)
   with Convention => C;
   --  The server's notices are no failure of a turn's, and stderr is the
   --  body's log, not the server's

   procedure Ignore_Notice
     (Argument : System.Address; Message : C.Strings.chars_ptr)
   is
      pragma Unreferenced (Argument, Message);
   begin
      null;
   end Ignore_Notice;

   --  The server as a failure names it: never the URL (it may hold a
   --  password), but what libpq made of it
   function Server_Of (Conn : Libpq.Connection) return String is
      Host : constant String := Text_Of (Libpq.Host (Conn));
      Port : constant String := Text_Of (Libpq.Port (Conn));
      Db   : constant String := Text_Of (Libpq.Db (Conn));
   begin
      if Host = "" and then Db = "" then
         return "PostgreSQL server (the --state URL)";
      end if;
      return "PostgreSQL server " & Host & (if Port = "" then "" else ":")
        & Port & ", database " & Db;
   end Server_Of;

   --  What every new connection is given, at Open and after a reconnect:
   --  the bound of a wait for another body's lock, set in the session (a
   --  URL's options=-c... stays the operator's)
   procedure Set_Up_Session (Self : Pg_Repository; Result : in out Status)
   is
      Bound : constant String := Self.Busy_Timeout_Ms'Image;
   begin
      Run (Self, "SET lock_timeout = "
           & Bound (Bound'First + 1 .. Bound'Last),
           "cannot set the lock timeout", Result);
   end Set_Up_Session;

   --  -- A batch: several statements in one round trip --------------------

   --  libpq's pipeline mode: a batch's statements are queued (Queue), sent
   --  together ending in one Sync (Send_Batch), and their results taken in
   --  the order queued (Take); the server runs them in turn and, once one
   --  fails, skips the rest up to the Sync.  A turn's transaction is
   --  explicit (its first batch begins it, its last commits it), so a
   --  failure leaves it aborted and Close_Batch rolls it back: nothing of
   --  that batch, nor of the turn's batches before it, is kept.  Each
   --  procedure does nothing once Result.Failed, but Close_Batch, which
   --  reads what is left of the batch and leaves pipeline mode.

   function Failure_Of
     (Self : Pg_Repository; What : String; Words : String) return Status is
     (Failure (Self, What & ": " & Words));
   --  What a failure of What says: the server's words

   --  A failure says whether the connection was lost, which libpq may see
   --  only once it reads on past the failing statement's result.  Once a
   --  batch's writes and COMMIT are on their way, only the server's refusal
   --  of a statement before the COMMIT says that nothing was kept: the
   --  server runs a batch's statements as they arrive, and may have made
   --  the commit durable and died before it said so
   procedure Note_If_Lost (Self : Pg_Repository; Result : in out Status) is
   begin
      if Result.Failed and then not Is_Connected (Self) then
         Append (Result.Reason,
                 (if Self.Writes and then Self.Commit_At > 0
                    and then not Self.Refused_Before_Commit
                  then Commit_Lost_Note else Lost_Note));
      end if;
   end Note_If_Lost;

   procedure Open_Batch (Self : in out Pg_Repository; Result : in out Status)
   is
   begin
      if Result.Failed then
         return;
      end if;
      Self.Writes := False;
      Self.Commit_At := 0;
      Self.Refused_Before_Commit := False;
      if Libpq.Enter_Pipeline_Mode (Self.Conn) /= 1 then
         Result := Failure_Of (Self, "cannot send the turn's statements",
                               Last_Error (Self));
         Note_If_Lost (Self, Result);
         return;
      end if;
      Self.In_Batch := True;
      Self.Queued := 0;
      Self.Taken := 0;
      Self.Synced := False;
   end Open_Batch;

   procedure Queue
     (Self      : in out Pg_Repository;
      Statement : Turn_Statement;
      Result    : in out Status;
      Given     : Param_List := []) is
   begin
      if Result.Failed then
         return;
      end if;
      --  Before it is sent: a part of it may reach the server
      Self.Writes := Self.Writes or else Statement = Write_Record;
      if Statement = Commit_Turn then
         Self.Commit_At := Self.Queued + 1;
      end if;
      if not Sent (Self, Statement, Given) then
         Result := Failure_Of (Self, "cannot send the turn's statements",
                               Last_Error (Self));
         return;
      end if;
      Self.Queued := Self.Queued + 1;
   end Queue;

   --  The Sync goes even after a failure to queue, so that what was queued
   --  before it can be read to the end
   procedure Send_Batch (Self : in out Pg_Repository; Result : in out Status)
   is
   begin
      if not Self.In_Batch or else not Is_Connected (Self) then
         return;
      end if;
      Self.Synced := Libpq.Send_Pipeline_Sync (Self.Conn) = 1;
      if not Self.Synced and then not Result.Failed then
         Result := Failure_Of (Self, "cannot send the turn's statements",
                               Last_Error (Self));
      end if;
   end Send_Batch;

   --  The result of the next statement queued, Res, when it succeeded (the
   --  caller reads and clears it); else Result says why, naming What, and
   --  Res is No_Result
   procedure Take
     (Self   : in out Pg_Repository;
      What   : String;
      Res    : out Libpq.Result;
      Result : in out Status)
   is
      Ending : Libpq.Result;
   begin
      Res := Libpq.No_Result;
      if Result.Failed or else not Self.In_Batch then
         return;
      end if;
      Self.Taken := Self.Taken + 1;
      Res := Libpq.Get_Result (Self.Conn);
      if Res = Libpq.No_Result then
         Result := Failure_Of (Self, What, Last_Error (Self));
         return;
      end if;
      --  A statement's results end in No_Result
      Ending := Libpq.Get_Result (Self.Conn);
      Libpq.Clear (Ending);
      if not Succeeded (Res) then
         --  A failure libpq makes of a lost connection has no SQLSTATE
         Self.Refused_Before_Commit :=
           Self.Taken /= Self.Commit_At
           and then Text_Of (Libpq.Result_Error_Field
                               (Res, Libpq.Diag_Sqlstate)) /= "";
         Result := Failure_Of
           (Self, What, One_Line (Libpq.Result_Error_Message (Res)));
         Libpq.Clear (Res);
         Res := Libpq.No_Result;
      end if;
   end Take;

   --  Take, for a statement whose result says nothing more
   procedure Take_Done
     (Self : in out Pg_Repository; What : String; Result : in out Status)
   is
      Res : Libpq.Result;
   begin
      Take (Self, What, Res, Result);
      Libpq.Clear (Res);
   end Take_Done;

   --  Read what is left of the batch (after a failure, the statements the
   --  server skipped, then the Sync's result) and leave pipeline mode;
   --  when Result.Failed, roll the transaction back.  A connection lost
   --  meanwhile is left as it is: the next turn makes it again
   procedure Close_Batch
     (Self : in out Pg_Repository; Result : in out Status)
   is
      Res    : Libpq.Result;
      Ending : Libpq.Result;
   begin
      if not Self.In_Batch then
         return;
      end if;
      Self.In_Batch := False;
      while Self.Taken < Self.Queued and then Is_Connected (Self) loop
         Self.Taken := Self.Taken + 1;
         Res := Libpq.Get_Result (Self.Conn);
         exit when Res = Libpq.No_Result;
         Libpq.Clear (Res);
         Ending := Libpq.Get_Result (Self.Conn);
         Libpq.Clear (Ending);
      end loop;
      if Self.Synced and then Is_Connected (Self) then
         Res := Libpq.Get_Result (Self.Conn);
         if Res /= Libpq.No_Result
           and then Libpq.Result_Status (Res) = Libpq.Pipeline_Sync
         then
            Libpq.Clear (Res);
            if Libpq.Exit_Pipeline_Mode (Self.Conn) /= 1
              and then not Result.Failed
            then
               Result := Failure_Of (Self, "cannot end the turn's statements",
                                     Last_Error (Self));
            end if;
         else
            Libpq.Clear (Res);
            if not Result.Failed then
               Result := Failure_Of (Self, "cannot end the turn's statements",
                                     "the server's answers were not those"
                                     & " of the statements sent");
            end if;
         end if;
      end if;
      Note_If_Lost (Self, Result);
      if Result.Failed
        and then Libpq.Pipeline_Status (Self.Conn) = Libpq.Pipeline_Off
      then
         Roll_Back (Self);
      end if;
   end Close_Batch;

   --  The turn's statements prepared in the session, in one batch; the
   --  connection's schema must be made
   procedure Prepare_Turns
     (Self : in out Pg_Repository; Result : in out Status)
   is
      What : constant String := "cannot prepare the turn's statements";
   begin
      Open_Batch (Self, Result);
      for Each in Turn_Statement loop
         exit when Result.Failed;
         if Libpq.Send_Prepare
              (Self.Conn, C.To_C (Name_Of (Each)), C.To_C (Turn_Sql (Each).all),
               0, System.Null_Address) = 1
         then
            Self.Queued := Self.Queued + 1;
         else
            Result := Failure_Of (Self, What, Last_Error (Self));
         end if;
      end loop;
      Send_Batch (Self, Result);
      for Each in Turn_Statement loop
         Take_Done (Self, What, Result);
      end loop;
      Close_Batch (Self, Result);
      Self.Prepared := not Result.Failed;
   end Prepare_Turns;

   --  A connection is made once at Open; a turn that finds it lost (the
   --  server restarted, or ended this session), or left in pipeline mode
   --  by a batch whose end was not read, makes it again; one whose
   --  statements could not be prepared prepares them again
   procedure Connect_Again_If_Lost
     (Self : in out Pg_Repository; Result : out Status) is
   begin
      Result := (others => <>);
      if Is_Connected (Self)
        and then Libpq.Pipeline_Status (Self.Conn) = Libpq.Pipeline_Off
      then
         if not Self.Prepared then
            Prepare_Turns (Self, Result);
         end if;
         return;
      end if;
      Libpq.Reset (Self.Conn);
      Self.Prepared := False;
      if Is_Connected (Self) then
         Set_Up_Session (Self, Result);
         Prepare_Turns (Self, Result);
         Body_Log.Info ("session store " & To_String (Self.Server)
                        & ": connected again");
      else
         Result := Failure (Self, "cannot connect again: " & Last_Error (Self)
                            & "; this turn was not run, the next one"
                            & " tries again");
      end if;
   end Connect_Again_If_Lost;

   --  -- A turn --------------------------------------------------------

   --  Queue the reads of Key's session: its record (locked until the
   --  commit when To_Write), and its budget log when budgets are kept
   --  (Take_Session takes them)
   procedure Queue_Read
     (Self     : in out Pg_Repository;
      Key      : access constant String;
      To_Write : Boolean;
      Result   : in out Status) is
   begin
      Queue (Self, (if To_Write then Read_Record_To_Write else Read_Record),
             Result, [1 => Bytes_Param (Key)]);
      if Self.Keeps_Budgets then
         Queue (Self, Read_Budget, Result, [1 => Bytes_Param (Key)]);
      end if;
   end Queue_Read;

   --  The record read, as stored (Read.Found False when there is none)
   procedure Take_Record
     (Self   : in out Pg_Repository;
      Read   : out Record_Read;
      Result : in out Status)
   is
      Res : Libpq.Result;
   begin
      Read := (others => <>);
      Take (Self, "cannot read the session", Res, Result);
      if Result.Failed then
         return;
      end if;
      if Has_Row (Res) then
         Read := (Found => True, Bytes => To_Unbounded_String (Cell (Res, 0, 0)));
      end if;
      Libpq.Clear (Res);
   end Take_Record;

   --  Budget: the session's budget log, read by Res, into State, oldest
   --  first; a value out of its range is held at the range's end, as the
   --  SQLite store does
   procedure Read_Budget_Log
     (Res   : Libpq.Result;
      State : in out Session_Table.Session)
   is
      function Column (Row, Index : Natural; High : Interfaces.Integer_64)
        return Interfaces.Integer_64 is
        (Interfaces.Integer_64'Max
           (0, Interfaces.Integer_64'Min (High, Int8 (Res, Row, Index))));
   begin
      State.Reservoir.Log.Clear;
      for Row in 0 .. Natural (Libpq.Tuples (Res)) - 1 loop
         State.Reservoir.Log.Append
           (Organs.Drive_Box.Spent_Calls'
              (At_Ms  => Wall_Clocks.Epoch_Ms
                           (Column (Row, 0, Interfaces.Integer_64
                                              (Wall_Clocks.Epoch_Ms'Last))),
               Calls  => Natural
                           (Column (Row, 1, Interfaces.Integer_64
                                              (Natural'Last))),
               Tokens => Natural
                           (Column (Row, 2, Interfaces.Integer_64
                                              (Natural'Last)))));
      end loop;
   end Read_Budget_Log;

   --  What Queue_Read queued: Key's session into State and Memory (fresh
   --  and empty when new), and the record as read into Read
   procedure Take_Session
     (Self   : in out Pg_Repository;
      Chosen : Organs.Sets.Organ_Set;
      Key    : access constant String;
      State  : out Session_Table.Session;
      Memory : out Organs.Morag.Excerpts.Excerpt_Memory;
      Read   : out Record_Read;
      Result : in out Status)
   is
      Budget  : Libpq.Result := Libpq.No_Result;
      Decoded : Session_Records.Decode_Status := Session_Records.Decoded;
      use type Session_Records.Decode_Status;
   begin
      State := Session_Table.Fresh (Chosen, Key.all);
      Memory := Organs.Morag.Excerpts.Empty;
      Take_Record (Self, Read, Result);
      if Self.Keeps_Budgets then
         Take (Self, "cannot read the session's budget", Budget, Result);
      end if;
      if not Result.Failed and then Read.Found then
         Session_Records.Decode
           (To_String (Read.Bytes), State, Memory, Decoded);
      end if;
      if Decoded /= Session_Records.Decoded then
         State := Session_Table.Fresh (Chosen, Key.all);
         Memory := Organs.Morag.Excerpts.Empty;
         Result := Failure (Self, "holds "
                            & Session_Records.Explanation (Decoded)
                            & " for this session");
      elsif not Result.Failed and then Self.Keeps_Budgets then
         Read_Budget_Log (Budget, State);
      end if;
      Libpq.Clear (Budget);
   end Take_Session;

   --  In the turn's transaction, one batch: State and Memory as the
   --  session's record, the most recently used; its budget log when kept;
   --  for a new session (Is_New) past the capacity, the least recently used
   --  evicted; then the commit.  When Result.Failed, nothing was kept,
   --  unless the connection was lost once the COMMIT was on its way (then
   --  Result says the server may have kept it)
   procedure Write_Session
     (Self   : in out Pg_Repository;
      Key    : access constant String;
      State  : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      Is_New : Boolean;
      Result : in out Status)
   is
      Bytes    : aliased constant String :=
        Session_Records.Encoded (State, Memory);
      Capacity : aliased constant String :=
        Spelled (Interfaces.Integer_64 (Self.Capacity));
      Logs     : constant Boolean :=
        Self.Keeps_Budgets and then not State.Reservoir.Log.Is_Empty;
      Ended, Calls, Tokens : Unbounded_String;
      Res      : Libpq.Result;
      Evicted  : Interfaces.Integer_64 := 0;
   begin
      if Result.Failed then
         return;
      end if;
      Open_Batch (Self, Result);
      Queue (Self, Write_Record, Result,
             [Bytes_Param (Key), Bytes_Param (Bytes'Unchecked_Access)]);
      if Self.Keeps_Budgets then
         Queue (Self, Forget_Budget, Result, [1 => Bytes_Param (Key)]);
      end if;
      if Logs then
         for Spent of State.Reservoir.Log loop
            Append (Ended, "," & Interfaces.Integer_64'Image
                      (Interfaces.Integer_64 (Spent.At_Ms)));
            Append (Calls, "," & Spent.Calls'Image);
            Append (Tokens, "," & Spent.Tokens'Image);
         end loop;
         declare
            function Spelled_Array (List : Unbounded_String) return String is
              ("{" & Slice (List, 2, Length (List)) & "}" & ASCII.NUL);
            Ended_Text  : aliased constant String := Spelled_Array (Ended);
            Calls_Text  : aliased constant String := Spelled_Array (Calls);
            Tokens_Text : aliased constant String := Spelled_Array (Tokens);
         begin
            Queue (Self, Log_Budget, Result,
                   [Bytes_Param (Key), Text_Param (Ended_Text'Unchecked_Access),
                    Text_Param (Calls_Text'Unchecked_Access),
                    Text_Param (Tokens_Text'Unchecked_Access)]);
         end;
      end if;
      if Is_New then
         Queue (Self, Evict_Past_Capacity, Result,
                [1 => Text_Param (Capacity'Unchecked_Access)]);
      end if;
      Queue (Self, Commit_Turn, Result);
      Send_Batch (Self, Result);

      Take_Done (Self, "cannot write the session", Result);
      if Self.Keeps_Budgets then
         Take_Done (Self, "cannot write the session's budget", Result);
      end if;
      if Logs then
         Take_Done (Self, "cannot write the session's budget", Result);
      end if;
      if Is_New then
         Take (Self, "cannot evict past the capacity", Res, Result);
         if not Result.Failed and then Has_Row (Res) then
            Evicted := Int8 (Res, 0, 0);
         end if;
         Libpq.Clear (Res);
      end if;
      Take_Done (Self, "cannot commit the turn", Result);
      Close_Batch (Self, Result);
      if not Result.Failed and then Evicted > 0 then
         Body_Log.Info
           ("session store full (" & Self.Capacity'Image
            & " ): evicted" & Evicted'Image
            & " least recently used session(s)");
      end if;
   end Write_Session;

   --  Two round trips a Short turn: its transaction begun, the session's
   --  lock taken and the session read (its row locked) in one batch; the
   --  work; the writes and the commit in another.  A Long turn: its read in a batch (and a
   --  transaction) of its own; the work; at its commit, the lock and the
   --  record read again in one batch, then the writes as a Short turn's
   overriding procedure Within_Turn
     (Self        : in out Pg_Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status)
   is
      Key    : aliased constant String := Session_Key;
      Held   : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      Read   : Record_Read;
      Again  : Record_Read;
      Said   : Verdict;
      Seemed_Connected : constant Boolean := Is_Connected (Self);
      --  libpq learns that the server ended an idle session (it restarted,
      --  or an operator ended it) only when the session is next used

      --  The turn's first batch: its transaction begun and the session
      --  read; it writes nothing, so it may be sent again
      procedure Begin_And_Read is
      begin
         Open_Batch (Self, Result);
         Queue (Self, Begin_Turn, Result);
         if Length = Short then
            --  A statement of its own before the read: each statement reads
            --  as of its own start (READ COMMITTED), so the read, sent behind
            --  it, sees what the lock's last holder committed
            Queue (Self, Lock_Session, Result,
                   [1 => Bytes_Param (Key'Unchecked_Access)]);
         end if;
         Queue_Read (Self, Key'Access, Length = Short, Result);
         if Length = Long then
            --  A read of its own: nothing is held while the client thinks
            Queue (Self, Commit_Turn, Result);
         end if;
         Send_Batch (Self, Result);
         Take_Done (Self, "cannot start a turn", Result);
         if Length = Short then
            Take_Done (Self, Lock_Failed, Result);
         end if;
         Take_Session (Self, Chosen, Key'Access, Held, Memory, Read, Result);
         if Length = Long then
            Take_Done (Self, "cannot read the session", Result);
         end if;
         Close_Batch (Self, Result);
      end Begin_And_Read;
   begin
      Connect_Again_If_Lost (Self, Result);
      Begin_And_Read;
      if Result.Failed and then Seemed_Connected
        and then not Is_Connected (Self)
      then
         --  Lost before this turn wrote anything: connect again and begin
         --  it again, once
         Connect_Again_If_Lost (Self, Result);
         Begin_And_Read;
      end if;
      if Result.Failed then
         --  A record that did not decode fails after a batch that succeeded
         Roll_Back (Self);
      else
         begin
            Work (Held, Memory, Said);
         exception
            when others =>
               --  Not handled here: the lock is released now, and the
               --  request loop's edge answers
               Roll_Back (Self);
               raise;
         end;
         case Said is
            when Discard => Roll_Back (Self);
            when Keep =>
               if Length = Long then
                  Open_Batch (Self, Result);
                  Queue (Self, Begin_Turn, Result);
                  Queue (Self, Lock_Session, Result,
                         [1 => Bytes_Param (Key'Unchecked_Access)]);
                  Queue (Self, Read_Record_To_Write, Result,
                         [1 => Bytes_Param (Key'Unchecked_Access)]);
                  Send_Batch (Self, Result);
                  Take_Done (Self, "cannot start the turn's commit", Result);
                  Take_Done (Self, Lock_Failed, Result);
                  Take_Record (Self, Again, Result);
                  Close_Batch (Self, Result);
                  if not Result.Failed and then Again /= Read then
                     Result := Failure
                       (Self, "the session changed in another body during"
                        & " this turn; nothing of this turn was kept");
                     Roll_Back (Self);
                  end if;
               end if;
               Write_Session
                 (Self, Key'Access, Held, Memory,
                  Is_New => not (if Length = Long then Again.Found
                                 else Read.Found),
                  Result => Result);
         end case;
      end if;
      if Result.Failed then
         Body_Log.Error ("session store " & To_String (Result.Reason));
      end if;
   end Within_Turn;

   overriding procedure Close (Self : in out Pg_Repository) is
   begin
      if Self.Conn /= Libpq.No_Connection then
         Libpq.Finish (Self.Conn);
         Self.Conn := Libpq.No_Connection;
      end if;
   end Close;

   --  -- Opening ------------------------------------------------------

   --  Connect with the defaults the harness's connections have
   --  (harness/database.py): a bounded wait for the server; keepalives
   --  while idle and a bound on unacknowledged data (tcp_user_timeout, ms)
   --  while a statement is in flight, so a server whose machine vanished
   --  fails the turn within about a minute rather than after TCP's own
   --  retransmissions; a name in pg_stat_activity.  The URL's own
   --  parameters, expanded after them, win
   function Connected (Url : String) return Libpq.Connection is
      type Chars_Array is array (Positive range <>) of C.Strings.chars_ptr
      with Convention => C;
      Keywords : Chars_Array :=
        [C.Strings.New_String ("connect_timeout"),
         C.Strings.New_String ("keepalives"),
         C.Strings.New_String ("keepalives_idle"),
         C.Strings.New_String ("keepalives_interval"),
         C.Strings.New_String ("keepalives_count"),
         C.Strings.New_String ("tcp_user_timeout"),
         C.Strings.New_String ("application_name"),
         C.Strings.New_String ("dbname"),
         C.Strings.Null_Ptr];
      Values   : Chars_Array :=
        [C.Strings.New_String ("10"),
         C.Strings.New_String ("1"),
         C.Strings.New_String ("30"),
         C.Strings.New_String ("10"),
         C.Strings.New_String ("3"),
         C.Strings.New_String ("60000"),
         C.Strings.New_String ("mafiabot-body"),
         C.Strings.New_String (Url),
         C.Strings.Null_Ptr];
      Conn     : constant Libpq.Connection :=
        Libpq.Connect_Params (Keywords'Address, Values'Address, 1);
   begin
      for Each of Keywords loop
         C.Strings.Free (Each);
      end loop;
      for Each of Values loop
         C.Strings.Free (Each);
      end loop;
      return Conn;
   end Connected;

   --  Under the schema lock: make or migrate the schema; when Result.Failed
   --  the transaction is rolled back
   procedure Make_Schema (Self : Pg_Repository; Result : in out Status) is
      Res     : Libpq.Result;
      Version : Natural := 0;
   begin
      if Result.Failed then
         return;
      end if;
      Res := Execute (Self, "SELECT to_regclass ('body_meta') IS NOT NULL");
      if not Succeeded (Res) or else not Has_Row (Res) then
         Fail (Self, Res, "cannot read the schema", Result);
         return;
      end if;
      if Cell (Res, 0, 0) = String'(1 => Character'Val (1)) then
         Libpq.Clear (Res);
         Res := Execute (Self, "SELECT value FROM body_meta"
                         & " WHERE name = 'schema_version'");
         if not Succeeded (Res) then
            Fail (Self, Res, "cannot read the schema version", Result);
            return;
         end if;
         declare
            Spelled_Version : constant String :=
              (if Has_Row (Res) then Cell (Res, 0, 0) else "");
         begin
            Libpq.Clear (Res);
            Version := Natural'Value (Spelled_Version);
         exception
            when Constraint_Error =>
               Result := Failure (Self, "holds a body_meta table that is not"
                                  & " a mafiabot session store's");
               Roll_Back (Self);
               return;
         end;
      else
         Libpq.Clear (Res);
      end if;
      if Version > Schema_Version then
         Result := Failure
           (Self, "holds a session store of schema version"
            & Version'Image & "; this body reads version"
            & Natural'Image (Schema_Version) & " (a newer body made it)");
         Roll_Back (Self);
         return;
      end if;
      for Next in Version + 1 .. Schema_Version loop
         --  Several statements in one string: libpq's simple query
         Res := Libpq.Exec (Self.Conn, C.To_C (Migrations (Next).all));
         if not Succeeded (Res) then
            Fail (Self, Res, "cannot make the schema (version" & Next'Image
                  & ")", Result);
            return;
         end if;
         Libpq.Clear (Res);
      end loop;
      if Version < Schema_Version then
         Run (Self, "UPDATE body_meta SET value = '" & Version_Text
              & "' WHERE name = 'schema_version'",
              "cannot mark the schema version", Result);
      end if;
   end Make_Schema;

   --  In Open's transaction: the store's secret, Proposed unless another
   --  body's is kept
   procedure Keep_Secret
     (Self     : Pg_Repository;
      Proposed : String;
      Secret   : out Unbounded_String;
      Result   : in out Status)
   is
      Given : aliased constant String := Proposed & ASCII.NUL;
      Res   : Libpq.Result;
   begin
      Secret := Null_Unbounded_String;
      Run (Self, "INSERT INTO body_meta VALUES ('request_state_key', $1)"
           & " ON CONFLICT (name) DO NOTHING",
           "cannot keep the requestState secret", Result,
           [1 => Text_Param (Given'Unchecked_Access)]);
      if Result.Failed then
         return;
      end if;
      Res := Execute (Self, "SELECT value FROM body_meta"
                      & " WHERE name = 'request_state_key'");
      if not Succeeded (Res) then
         Fail (Self, Res, "cannot read the requestState secret", Result);
         return;
      end if;
      if Has_Row (Res) and then Cell_Length (Res, 0, 0) = Secret_Digits then
         Secret := To_Unbounded_String (Cell (Res, 0, 0));
      end if;
      Libpq.Clear (Res);
      if Length (Secret) /= Secret_Digits then
         Result := Failure (Self, "holds a requestState secret that is not"
                            & Secret_Digits'Image & " hex digits");
         Roll_Back (Self);
      end if;
   end Keep_Secret;

   procedure Open
     (Url             : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Keeps_Budgets   : Boolean;
      Proposed_Secret : String;
      Opened          : out Repository_Access;
      Secret          : out Ada.Strings.Unbounded.Unbounded_String;
      Result          : out Status)
   is
      Store    : constant Pg_Access := new Pg_Repository;
      Replaced : System.Address;
      pragma Unreferenced (Replaced);
   begin
      Opened := null;
      Secret := Null_Unbounded_String;
      Result := (others => <>);
      Store.Capacity := Capacity;
      Store.Busy_Timeout_Ms := Busy_Timeout_Ms;
      Store.Keeps_Budgets := Keeps_Budgets;
      declare
         Problem : constant String := Libpq.Load;
      begin
         if Problem /= "" then
            Store.Server := To_Unbounded_String
              ("PostgreSQL server (the --state URL)");
            Result := Failure (Store.all, Problem);
            return;
         end if;
      end;
      Store.Conn := Connected (Url);
      if Store.Conn = Libpq.No_Connection then
         Store.Server := To_Unbounded_String
           ("PostgreSQL server (the --state URL)");
         Result := Failure (Store.all, "cannot connect (out of memory)");
         return;
      end if;
      Store.Server := To_Unbounded_String (Server_Of (Store.Conn));
      if not Is_Connected (Store.all) then
         Result := Failure (Store.all, "cannot connect: "
                            & Last_Error (Store.all));
         Store.Close;
         return;
      end if;
      Replaced := Libpq.Set_Notice_Processor
        (Store.Conn, Ignore_Notice'Address, System.Null_Address);
      Set_Up_Session (Store.all, Result);
      Run (Store.all, "BEGIN", "cannot be used", Result);
      Run (Store.all, "SELECT pg_advisory_xact_lock (" & Lock_Namespace'Image
           & "," & Schema_Lock'Image & ")", "cannot lock the schema", Result);
      Make_Schema (Store.all, Result);
      Keep_Secret (Store.all, Proposed_Secret, Secret, Result);
      Run (Store.all, "COMMIT", "cannot commit the schema", Result);
      if not Result.Failed then
         Prepare_Turns (Store.all, Result);
      end if;
      if Result.Failed then
         Secret := Null_Unbounded_String;
         Store.Close;
         return;
      end if;
      Opened := Repository_Access (Store);
   end Open;

end Session_Repositories.Postgres;
