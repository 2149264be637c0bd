with Interfaces.C.Strings;
with System;
with GNAT.OS_Lib;
with Body_Log;
with Monotonic;
with Organs.Drive_Box;
with Session_Records;
with Wall_Clocks;

package body Session_Store is

   use type Interfaces.C.int;
   use type Interfaces.Integer_64;
   use type Interfaces.Unsigned_32;

   package C renames Interfaces.C;

   Version_Text : constant String := "3";
   --  Schema_Version as PRAGMA user_version reads it

   pragma Compile_Time_Error
     (Schema_Version /= 3, "Version_Text spells Schema_Version");

   Migrated_Version_Text : constant String := "2";
   --  The one earlier version Open migrates: its store lacks the triggers
   --  that count the sessions, so its tally may have drifted from them

   Page_Bytes : constant String := "1024";
   --  A store's page size, set before it is made: a turn's cost is that of
   --  its WAL frames (a page each, written and checksummed), and a table
   --  leaf of 1 KB still holds a record of up to 989 bytes in one page

   type Sql_Text is access constant String;

   type Statement_List is array (Positive range <>) of Sql_Text;

   Counting_Triggers : constant Statement_List :=
     [new String'("CREATE TRIGGER counted_in AFTER INSERT ON sessions"
                  & " BEGIN UPDATE tally SET sessions = sessions + 1; END"),
      new String'("CREATE TRIGGER counted_out AFTER DELETE ON sessions"
                  & " BEGIN UPDATE tally SET sessions = sessions - 1; END")];
   --  Every insert and delete of a session, this body's, another's or an
   --  operator's by hand, keeps the tally; an UPDATE (a turn) fires none

   Mark_Version : constant Statement_List :=
     [1 => new String'("PRAGMA user_version = " & Version_Text)];

   Schema : constant Statement_List :=
     [new String'("CREATE TABLE sessions (used INTEGER PRIMARY KEY,"
                  & " key BLOB NOT NULL UNIQUE, record BLOB NOT NULL)"),
      --  Rowid = rank of use (the turn's, 1 + the highest so far): the
      --  table is its own order of use, the least recent at its left
      --  edge; the key's index finds a session.  A turn of the most
      --  recent session rewrites its record's page alone.
      new String'("CREATE TABLE tally (one INTEGER PRIMARY KEY"
                  & " CHECK (one = 1), sessions INTEGER NOT NULL)"),
      --  One row: the sessions kept, so that neither a turn nor Open ever
      --  counts them
      new String'("INSERT INTO tally VALUES (1, 0)")]
     & Counting_Triggers & Mark_Version;

   Migration : constant Statement_List :=
     Counting_Triggers
     & [new String'("UPDATE tally SET sessions ="
                    & " (SELECT count (*) FROM sessions)")]
     & Mark_Version;
   --  From Migrated_Version_Text: the tables are those of this schema

   --  Budget (--energy budget): each session's log of model calls, a row
   --  per turn that asked the model, in a table of its own beside the
   --  sessions, so that a restart does not refill a budget.  Made on
   --  Open where missing (no schema version: a body that keeps no budget
   --  never reads it); a session's rows go with its record, whoever
   --  deletes it (eviction, an operator forgetting a user).
   Budget_Schema : constant Statement_List :=
     [new String'("CREATE TABLE IF NOT EXISTS budget_calls"
                  & " (key BLOB NOT NULL, ended_ms INTEGER NOT NULL,"
                  & " calls INTEGER NOT NULL, tokens INTEGER NOT NULL)"),
      new String'("CREATE INDEX IF NOT EXISTS budget_calls_by_key"
                  & " ON budget_calls (key, ended_ms)"),
      new String'("CREATE TRIGGER IF NOT EXISTS budget_forgotten AFTER"
                  & " DELETE ON sessions BEGIN DELETE FROM budget_calls"
                  & " WHERE key = old.key; END")];

   Sql : constant array (Query) of Sql_Text :=
     [Begin_Write  => new String'("BEGIN IMMEDIATE"),
      Commit       => new String'("COMMIT"),
      Rollback     => new String'("ROLLBACK"),
      Read_Record  => new String'
        ("SELECT record, used, used = (SELECT max (used) FROM sessions)"
         & " FROM sessions WHERE key = ?1"),
      --  The record, its rank of use, and whether that is the highest
      Insert_Record => new String'
        ("INSERT INTO sessions (used, key, record) VALUES"
         & " ((SELECT coalesce (max (used), 0) + 1 FROM sessions), ?1, ?2)"),
      Update_Record => new String'
        ("UPDATE sessions SET record = ?2 WHERE used = ?1"),
      --  Keeps the rank: one page written; found by its rank, the table's
      --  own key, not through the key's index
      Update_Record_And_Use => new String'
        ("UPDATE sessions SET record = ?2,"
         & " used = (SELECT max (used) FROM sessions) + 1 WHERE used = ?1"
         & " RETURNING used"),
      Read_Tally   => new String'("SELECT sessions FROM tally"),
      Evict_Oldest => new String'
        ("DELETE FROM sessions WHERE used IN"
         & " (SELECT used FROM sessions ORDER BY used LIMIT ?1)"),
      Read_Budget  => new String'
        ("SELECT ended_ms, calls, tokens FROM budget_calls WHERE key = ?1"
         & " ORDER BY ended_ms"),
      Forget_Budget => new String'("DELETE FROM budget_calls WHERE key = ?1"),
      Log_Budget   => new String'
        ("INSERT INTO budget_calls (key, ended_ms, calls, tokens)"
         & " VALUES (?1, ?2, ?3, ?4)")];

   Trim_Threshold : constant C.int := -1;
   --  glibc's M_TRIM_THRESHOLD

   Kept_Heap_Top : constant C.int := 64 * 1024 * 1024;

   function Set_Malloc_Option (Option, Value : C.int) return C.int
   with Import, Convention => C, External_Name => "mallopt";

   Configured : Boolean := False;

   --  Before the first store opens: SQLite takes its configuration only
   --  before it is first used
   procedure Configure_Once is
   begin
      if Configured then
         return;
      end if;
      Configured := True;
      --  SQLite's statement journal takes and frees some 60 KB at the top
      --  of the heap in every turn: under glibc's default threshold
      --  (128 KB) each turn would give it back to the system and fault it
      --  in again
      if Set_Malloc_Option (Trim_Threshold, Kept_Heap_Top) /= 1 then
         Body_Log.Warning ("mallopt refused a trim threshold: turns on the"
                           & " store will be slower");
      end if;
      --  One thread, and no memory statistics: SQLite's global mutexes and
      --  its accounting of every allocation are of no use to the body
      if Sqlite.Config (Sqlite.Config_Single_Thread) /= Sqlite.OK
        or else Sqlite.Config (Sqlite.Config_Memory_Status, 0) /= Sqlite.OK
      then
         Body_Log.Warning ("SQLite kept its default threading and memory"
                           & " statistics: turns on the store will be slower");
      end if;
   end Configure_Once;

   function Failure (Self : Store; Reason : String) return Outcome is
     ((Failed => True,
       Reason => Self.Path & ": " & To_Unbounded_String (Reason)));

   function Last_Error (Self : Store) return String is
     (C.Strings.Value (Sqlite.Errmsg (Self.Db)));

   --  Run the one statement Text to its end, reading nothing
   procedure Execute (Self : Store; Text : String; Code : out Sqlite.Result_Code)
   is
      Prepared : Sqlite.Statement;
      Ignored  : Sqlite.Result_Code;
   begin
      Code := Sqlite.Prepare_V2 (Self.Db, C.To_C (Text), -1, Prepared);
      if Code /= Sqlite.OK then
         return;
      end if;
      loop
         Code := Sqlite.Step (Prepared);
         exit when Code /= Sqlite.Row;
      end loop;
      if Code = Sqlite.Done then
         Code := Sqlite.OK;
      end if;
      Ignored := Sqlite.Finalize (Prepared);
   end Execute;

   --  The first column of the first row Text gives, as text ("" for none)
   procedure Read_Text
     (Self : Store; Text : String; Value : out Unbounded_String;
      Code : out Sqlite.Result_Code)
   is
      Prepared : Sqlite.Statement;
      Ignored  : Sqlite.Result_Code;
   begin
      Value := Null_Unbounded_String;
      Code := Sqlite.Prepare_V2 (Self.Db, C.To_C (Text), -1, Prepared);
      if Code /= Sqlite.OK then
         return;
      end if;
      Code := Sqlite.Step (Prepared);
      if Code = Sqlite.Row then
         declare
            Column : constant C.Strings.chars_ptr :=
              Sqlite.Column_Text (Prepared, 0);
         begin
            if C.Strings."/=" (Column, C.Strings.Null_Ptr) then
               Value := To_Unbounded_String (C.Strings.Value (Column));
            end if;
         end;
         Code := Sqlite.OK;
      elsif Code = Sqlite.Done then
         Code := Sqlite.OK;
      end if;
      Ignored := Sqlite.Finalize (Prepared);
   end Read_Text;

   procedure Close (Self : in out Store) is
      Ignored : Sqlite.Result_Code;
   begin
      for Prepared of Self.Queries loop
         Ignored := Sqlite.Finalize (Prepared);
         Prepared := Sqlite.No_Statement;
      end loop;
      Ignored := Sqlite.Close (Self.Db);
      Self.Db := Sqlite.No_Connection;
   end Close;

   procedure Open
     (Self            : in out Store;
      Path            : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Full_Sync       : Boolean;
      Result          : out Outcome)
   is
      Code  : Sqlite.Result_Code;
      Value : Unbounded_String;

      Locked : constant String :=
        "is locked by another process for longer than"
        & Busy_Timeout_Ms'Image & " ms (--state-busy-ms)";

      procedure Pause is
         Slept : constant C.int := Sqlite.Sleep (1);
         pragma Unreferenced (Slept);
      begin
         null;
      end Pause;

      procedure Fail (Reason : String) is
      begin
         Result := Failure (Self, Reason);
         if Is_Open (Self) then
            Close (Self);
         end if;
      end Fail;

      --  In Open's write transaction, which commits them all or none
      procedure Run_All (Statements : Statement_List) is
      begin
         for Statement of Statements loop
            exit when Code /= Sqlite.OK;
            Execute (Self, Statement.all, Code);
         end loop;
      end Run_All;
   begin
      Configure_Once;
      Self.Path := To_Unbounded_String (Path);
      Self.Capacity := Capacity;
      Self.Busy_Timeout_Ms := Busy_Timeout_Ms;
      Self.Full_Sync := Full_Sync;
      Result := (others => <>);
      if GNAT.OS_Lib.Is_Directory (Path) then
         Fail ("is a directory, not a file");
         return;
      elsif not GNAT.OS_Lib.Is_Regular_File (Path)
        and then GNAT.OS_Lib."/=" (GNAT.OS_Lib.File_Time_Stamp (Path),
                                   GNAT.OS_Lib.Invalid_Time)
      then
         --  It exists: a FIFO, a device or a socket
         Fail ("is not a regular file");
         return;
      end if;

      Code := Sqlite.Open_V2
        (C.To_C (Path), Self.Db,
         Sqlite.Open_Read_Write + Sqlite.Open_Create + Sqlite.Open_No_Mutex
         + Sqlite.Open_Ex_Res_Code);
      if Code /= Sqlite.OK then
         if Is_Open (Self) then
            Fail ("cannot be opened: " & Last_Error (Self));
         else
            Fail ("cannot be opened (out of memory)");
         end if;
         return;
      elsif Sqlite.Db_Readonly (Self.Db, C.To_C ("main")) /= 0 then
         Fail ("is read-only: the store is written on every turn");
         return;
      end if;
      if Sqlite.Busy_Timeout (Self.Db, C.int (Busy_Timeout_Ms)) /= Sqlite.OK
      then
         Fail ("cannot be given a busy timeout: " & Last_Error (Self));
         return;
      end if;

      --  Before WAL mode, the only time a new store takes it; a no-op on
      --  a store already made
      Execute (Self, "PRAGMA page_size = " & Page_Bytes, Code);
      --  Another body may be making the store, or switching it to WAL,
      --  right now: SQLite answers Busy at once here rather than wait (it
      --  would risk a deadlock), so the wait is this loop's, to a deadline
      --  as far as the busy timeout.  A store in another journal mode held
      --  by another process would instead make SQLite's busy handler wait
      --  the whole timeout in every pass: the handler is off meanwhile
      declare
         Deadline : constant Monotonic.Instant :=
           Monotonic.After (Busy_Timeout_Ms);
         use type Monotonic.Instant;
      begin
         if Sqlite.Busy_Timeout (Self.Db, 0) /= Sqlite.OK then
            Fail ("cannot be given a busy timeout: " & Last_Error (Self));
            return;
         end if;
         loop
            Read_Text (Self, "PRAGMA journal_mode = WAL", Value, Code);
            exit when Sqlite.Primary (Code) /= Sqlite.Busy
              or else Monotonic.Now >= Deadline;
            Pause;
         end loop;
         if Sqlite.Busy_Timeout (Self.Db, C.int (Busy_Timeout_Ms))
           /= Sqlite.OK
         then
            Fail ("cannot be given a busy timeout: " & Last_Error (Self));
            return;
         end if;
      end;
      if Sqlite.Primary (Code) = Sqlite.Busy then
         Fail (Locked);
         return;
      elsif Sqlite.Primary (Code) = Sqlite.Read_Only then
         Fail ("cannot be written, or its directory cannot (the WAL journal"
               & " is kept beside it): " & Last_Error (Self));
         return;
      elsif Code /= Sqlite.OK then
         Fail ("cannot be read: " & Last_Error (Self));
         return;
      elsif To_String (Value) /= "wal" then
         Fail ("cannot keep a WAL journal (journal mode " & To_String (Value)
               & ")");
         return;
      end if;
      Execute (Self, "PRAGMA synchronous = "
                     & (if Full_Sync then "FULL" else "NORMAL"), Code);
      if Code /= Sqlite.OK then
         Fail ("cannot be set to synchronous "
               & (if Full_Sync then "FULL" else "NORMAL") & ": "
               & Last_Error (Self));
         return;
      end if;

      --  The write lock, taken once, proves the file and its directory
      --  writable and the store not held by another process
      Execute (Self, "BEGIN IMMEDIATE", Code);
      if Sqlite.Primary (Code) = Sqlite.Busy then
         Fail (Locked);
         return;
      elsif Code /= Sqlite.OK then
         Fail ("cannot be written: " & Last_Error (Self));
         return;
      end if;

      Read_Text (Self, "PRAGMA user_version", Value, Code);
      if Code = Sqlite.OK and then To_String (Value) = "0" then
         Read_Text (Self, "SELECT count(*) FROM sqlite_schema", Value, Code);
         if Code = Sqlite.OK and then To_String (Value) /= "0" then
            Fail ("is an SQLite database but not a mafiabot session store");
            return;
         end if;
         Run_All (Schema);
      elsif Code = Sqlite.OK
        and then To_String (Value) = Migrated_Version_Text
      then
         Run_All (Migration);
         if Code = Sqlite.OK then
            Body_Log.Info ("session store " & Path & ": schema "
                           & Migrated_Version_Text & " migrated to "
                           & Version_Text & " (the tally recounted)");
         end if;
      elsif Code = Sqlite.OK
        and then To_String (Value) /= Version_Text
      then
         Fail ("has schema version " & To_String (Value)
               & "; this body reads version"
               & Natural'Image (Schema_Version));
         return;
      end if;

      if Self.Keeps_Budgets then
         Run_All (Budget_Schema);
      end if;
      for Each in Query loop
         exit when Code /= Sqlite.OK;
         if Each not in Budget_Query or else Self.Keeps_Budgets then
            Code := Sqlite.Prepare_V2
              (Self.Db, C.To_C (Sql (Each).all), -1, Self.Queries (Each));
         end if;
      end loop;
      if Code = Sqlite.OK then
         Execute (Self, "COMMIT", Code);
      end if;
      if Code /= Sqlite.OK then
         Fail ("cannot be used: " & Last_Error (Self));
         return;
      end if;
      --  The journal and its index exist from the first transaction on, and
      --  stay while any connection has the store open
      Self.Opened :=
        (Db  => File_Identities.Of_Path (Path),
         Wal => File_Identities.Of_Path (Path & "-wal"),
         Shm => File_Identities.Of_Path (Path & "-shm"));
   end Open;

   --  One step of a prepared query; Row and Done are the successes
   function Run (Self : Store; Which : Query) return Sqlite.Result_Code is
     (Sqlite.Step (Self.Queries (Which)));

   --  Ready Which for its next run; SQLite keeps no pointer to a bound
   --  value past this
   procedure Finish (Self : Store; Which : Query) is
      Reset   : constant Sqlite.Result_Code :=
        Sqlite.Reset (Self.Queries (Which));
      Cleared : constant Sqlite.Result_Code :=
        Sqlite.Clear_Bindings (Self.Queries (Which));
      pragma Unreferenced (Reset, Cleared);
   begin
      null;
   end Finish;

   --  Bytes are read where they lie (not copied): they must outlive the
   --  run of Which, up to its Finish
   procedure Bind_Bytes
     (Self : Store; Which : Query; Index : Positive; Bytes : String;
      Code : out Sqlite.Result_Code) is
   begin
      Code := Sqlite.Bind_Blob
        (Self.Queries (Which), C.int (Index), Bytes'Address, Bytes'Length,
         Sqlite.Static);
   end Bind_Bytes;

   Main_Schema : constant C.char_array := C.To_C ("main");

   --  The store's data version (Sqlite.Fcntl_Data_Version); Known is False
   --  when SQLite cannot say
   procedure Read_Data_Version
     (Self    : Store;
      Version : out Interfaces.Unsigned_32;
      Known   : out Boolean)
   is
      Value : aliased Interfaces.Unsigned_32 := 0;
   begin
      Known := Sqlite.File_Control
        (Self.Db, Main_Schema, Sqlite.Fcntl_Data_Version, Value'Address)
        = Sqlite.OK;
      Version := Value;
   end Read_Data_Version;

   --  Whether Session_Key's latest record is the one this body committed
   --  last; only under the write lock, which no other writer holds
   function Is_Last_Committed (Self : Store; Session_Key : String)
     return Boolean
   is
      Version : Interfaces.Unsigned_32;
      Known   : Boolean;
   begin
      if not Self.Last.Known or else Self.Last.Key /= Session_Key then
         return False;
      end if;
      Read_Data_Version (Self, Version, Known);
      return Known and then Version = Self.Last.Version;
   end Is_Last_Committed;

   --  After a successful commit of State as Session_Key's record
   procedure Remember_Commit
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Rank        : Interfaces.Integer_64)
   is
      Version : Interfaces.Unsigned_32;
      Known   : Boolean;
   begin
      Read_Data_Version (Self, Version, Known);
      if Self.Last.Key /= Session_Key then
         Self.Last.Key := To_Unbounded_String (Session_Key);
      end if;
      Self.Last.State := State;
      Self.Last.Memory := Memory;
      Self.Last.Rank := Rank;
      Self.Last.Version := Version;
      Self.Last.Known := Known;
   end Remember_Commit;

   procedure Bind_Number
     (Self : Store; Which : Query; Index : Positive;
      Value : Interfaces.Integer_64; Code : out Sqlite.Result_Code) is
   begin
      Code := Sqlite.Bind_Int64 (Self.Queries (Which), C.int (Index), Value);
   end Bind_Number;

   --  Undo the open transaction, if any, and say why
   procedure Abandon
     (Self : in out Store; Reason : String; Result : out Outcome)
   is
      Ignored : Sqlite.Result_Code;
   begin
      Result := Failure (Self, Reason);
      --  What a failed turn leaves is not this body's to vouch for
      Self.Last.Known := False;
      if Sqlite.Get_Autocommit (Self.Db) = 0 then
         Ignored := Run (Self, Rollback);
         Finish (Self, Rollback);
      end if;
   end Abandon;

   procedure Abandon_Turn (Self : in out Store) is
      Ignored : Sqlite.Result_Code;
   begin
      if Is_Open (Self) and then Sqlite.Get_Autocommit (Self.Db) = 0 then
         Self.Last.Known := False;
         Ignored := Run (Self, Rollback);
         Finish (Self, Rollback);
      end if;
   end Abandon_Turn;

   --  The record of Read_Record's row, where SQLite holds it until the
   --  query is finished
   function Found_Length (Self : Store) return Natural is
     (Natural (Sqlite.Column_Bytes (Self.Queries (Read_Record), 0)));
   function Found_Address (Self : Store) return System.Address is
     (Sqlite.Column_Blob (Self.Queries (Read_Record), 0));

   --  Run Read_Record for Session_Key, taking the standing and rank of
   --  what it finds.  When Found, the record (Found_Length, Found_Address)
   --  can be read until the caller finishes the query; else it is finished,
   --  and Result.Failed if the store could not be read (no transaction is
   --  left open then) rather than holds no record of the session
   procedure Find_Record
     (Self        : in out Store;
      Session_Key : String;
      Found       : out Boolean;
      Result      : out Outcome)
   is
      Code : Sqlite.Result_Code;
   begin
      Result := (others => <>);
      Bind_Bytes (Self, Read_Record, 1, Session_Key, Code);
      if Code = Sqlite.OK then
         Code := Run (Self, Read_Record);
      end if;
      Found := Code = Sqlite.Row;
      if Found then
         Self.Read_Rank :=
           Sqlite.Column_Int64 (Self.Queries (Read_Record), 1);
         Self.Read_Standing :=
           (if Sqlite.Column_Int64 (Self.Queries (Read_Record), 2) = 1
            then Most_Recent else Less_Recent);
      elsif Code = Sqlite.Done then
         Finish (Self, Read_Record);
         Self.Read_Standing := Unknown;
      else
         declare
            Reason : constant String :=
              "cannot read the session: " & Last_Error (Self);
         begin
            Finish (Self, Read_Record);
            Abandon (Self, Reason, Result);
         end;
      end if;
   end Find_Record;

   --  Budget: the session's budget log into State, oldest first; a value
   --  out of its range is held at the range's end (a log written by hand
   --  can only hold a slot longer or shorter, never break a turn)
   procedure Read_Budget_Log
     (Self        : in out Store;
      Session_Key : String;
      State       : in out Session_Table.Session;
      Result      : in out Outcome)
   is
      Code : Sqlite.Result_Code;

      function Column (Index : C.int; High : Interfaces.Integer_64)
        return Interfaces.Integer_64 is
        (Interfaces.Integer_64'Max
           (0, Interfaces.Integer_64'Min
                 (High, Sqlite.Column_Int64
                          (Self.Queries (Read_Budget), Index))));
   begin
      State.Reservoir.Log.Clear;
      Bind_Bytes (Self, Read_Budget, 1, Session_Key, Code);
      if Code = Sqlite.OK then
         loop
            Code := Run (Self, Read_Budget);
            exit when Code /= Sqlite.Row;
            State.Reservoir.Log.Append
              (Organs.Drive_Box.Spent_Calls'
                 (At_Ms  => Wall_Clocks.Epoch_Ms
                              (Column (0, Interfaces.Integer_64
                                            (Wall_Clocks.Epoch_Ms'Last))),
                  Calls  => Natural
                              (Column (1, Interfaces.Integer_64
                                            (Natural'Last))),
                  Tokens => Natural
                              (Column (2, Interfaces.Integer_64
                                            (Natural'Last)))));
         end loop;
      end if;
      if Code /= Sqlite.Done then
         declare
            Reason : constant String :=
              "cannot read the session's budget: " & Last_Error (Self);
         begin
            Finish (Self, Read_Budget);
            Abandon (Self, Reason, Result);
         end;
      else
         Finish (Self, Read_Budget);
      end if;
   end Read_Budget_Log;

   --  Budget: State's log as the session's rows, in the turn's write
   --  transaction; Code is Done when all of it was written
   procedure Write_Budget_Log
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Code        : out Sqlite.Result_Code) is
   begin
      Bind_Bytes (Self, Forget_Budget, 1, Session_Key, Code);
      if Code = Sqlite.OK then
         Code := Run (Self, Forget_Budget);
      end if;
      Finish (Self, Forget_Budget);
      for Spent of State.Reservoir.Log loop
         exit when Code /= Sqlite.Done;
         Bind_Bytes (Self, Log_Budget, 1, Session_Key, Code);
         if Code = Sqlite.OK then
            Bind_Number (Self, Log_Budget, 2,
                         Interfaces.Integer_64 (Spent.At_Ms), Code);
         end if;
         if Code = Sqlite.OK then
            Bind_Number (Self, Log_Budget, 3,
                         Interfaces.Integer_64 (Spent.Calls), Code);
         end if;
         if Code = Sqlite.OK then
            Bind_Number (Self, Log_Budget, 4,
                         Interfaces.Integer_64 (Spent.Tokens), Code);
         end if;
         if Code = Sqlite.OK then
            Code := Run (Self, Log_Budget);
         end if;
         Finish (Self, Log_Budget);
      end loop;
   end Write_Budget_Log;

   --  Read Session_Key's record into State (fresh when there is none),
   --  with its standing and rank; under the write lock, or in a read
   --  transaction of its own, which is over when this returns.  When Copy:
   --  the bytes read into Self.Long_Read too.  When Result.Failed, no
   --  transaction is left open
   procedure Read_Session
     (Self        : in out Store;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Copy        : Boolean;
      State       : out Session_Table.Session;
      Memory      : out Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   is
      Found : Boolean;
   begin
      Find_Record (Self, Session_Key, Found, Result);
      if Found then
         declare
            Held   : String (1 .. Found_Length (Self))
            with Import, Address => Found_Address (Self);
            Status : Session_Records.Decode_Status;
            use type Session_Records.Decode_Status;
         begin
            Session_Records.Decode (Held, State, Memory, Status);
            if Copy then
               Self.Long_Read := (Found => True,
                                  Bytes => To_Unbounded_String (Held));
            end if;
            Finish (Self, Read_Record);
            if Status /= Session_Records.Decoded then
               State := Session_Table.Fresh (Chosen, Session_Key);
               Abandon (Self, "holds " & Session_Records.Explanation (Status)
                        & " for this session", Result);
            elsif Self.Keeps_Budgets then
               Read_Budget_Log (Self, Session_Key, State, Result);
            end if;
         end;
      else
         State := Session_Table.Fresh (Chosen, Session_Key);
         Memory := Organs.Morag.Excerpts.Empty;
         if Copy then
            Self.Long_Read := (Found => False, Bytes => <>);
         end if;
      end if;
   end Read_Session;

   --  BEGIN IMMEDIATE; when Result.Failed, no transaction is open
   procedure Take_Write_Lock (Self : in out Store; Result : out Outcome) is
      Code : Sqlite.Result_Code;
   begin
      Result := (others => <>);
      Code := Run (Self, Begin_Write);
      Finish (Self, Begin_Write);
      if Sqlite.Primary (Code) = Sqlite.Busy then
         Result := Failure (Self, "locked by another process for longer than"
                            & " the busy timeout (--state-busy-ms)");
      elsif Code /= Sqlite.Done then
         Result := Failure (Self, "cannot start a turn: " & Last_Error (Self));
      end if;
   end Take_Write_Lock;

   --  Whether the file Self has open is no longer the one at its path: by
   --  SQLite's comparison of the open file's inode with the path's, and by
   --  the device and inode Open found at the path
   function Has_Moved (Self : Store) return Boolean is
      Moved : aliased C.int := 0;
      use type File_Identities.Identity;
   begin
      return
        (Sqlite.File_Control
           (Self.Db, Main_Schema, Sqlite.Fcntl_Has_Moved, Moved'Address)
         = Sqlite.OK
         and then Moved /= 0)
        or else File_Identities.Of_Path (To_String (Self.Path))
                /= Self.Opened.Db;
   end Has_Moved;

   --  Whether the journal or the index Self has open is still at its path
   function Journal_Is_Left (Self : Store) return Boolean is
      Path : constant String := To_String (Self.Path);
      use type File_Identities.Identity;
   begin
      return (Self.Opened.Wal /= File_Identities.None
              and then File_Identities.Of_Path (Path & "-wal")
                       = Self.Opened.Wal)
        or else (Self.Opened.Shm /= File_Identities.None
                 and then File_Identities.Of_Path (Path & "-shm")
                          = Self.Opened.Shm);
   end Journal_Is_Left;

   Moved_Away : constant String :=
     "was removed or replaced while this body ran";

   --  Outside a transaction: close the file Self has open, which is no
   --  longer at its path, and open the path instead.  Self stays on the old
   --  file (refusing every turn, for each checks Has_Moved) unless the path
   --  opens: a store that is open stays open
   procedure Reopen (Self : in out Store; Result : out Outcome) is
      Fresh   : Store;
      Opened  : Outcome;
      Persist : aliased C.int := 1;
      Ignored : Sqlite.Result_Code;
      Path    : constant String := To_String (Self.Path);
   begin
      if Journal_Is_Left (Self) then
         Result := Failure
           (Self, Moved_Away & ", but its WAL journal (-wal, -shm) was left"
            & " beside the file now there, which would be read through it"
            & " and corrupted: remove those too, or stop every body on the"
            & " store first");
         return;
      end if;
      Fresh.Keeps_Budgets := Self.Keeps_Budgets;
      Open (Fresh, Path, Self.Capacity, Self.Busy_Timeout_Ms, Self.Full_Sync,
            Opened);
      if Opened.Failed then
         declare
            Reason : constant String := To_String (Opened.Reason);
         begin
            --  Opened.Reason starts with the path, as Result's will
            Result := Failure
              (Self, Moved_Away & ", and cannot be opened again: "
               & Reason (Reason'First + Path'Length + 2 .. Reason'Last));
         end;
         return;
      end if;
      --  Closing the last connection to a WAL store removes its journal and
      --  index by their paths, which now name the new store's: they stay
      Ignored := Sqlite.File_Control
        (Self.Db, Main_Schema, Sqlite.Fcntl_Persist_Wal, Persist'Address);
      Close (Self);
      Self.Db := Fresh.Db;
      Self.Queries := Fresh.Queries;
      Self.Opened := Fresh.Opened;
      Self.Read_Standing := Unknown;
      Self.Long_Read := (others => <>);
      Self.Last.Known := False;
      Result := (others => <>);
      Body_Log.Info ("session store " & Path & ": " & Moved_Away
                     & "; opened the file now at the path (the old file's"
                     & " sessions are not carried over)");
   end Reopen;

   --  The write lock on the file at Self's path, opened again first if it
   --  is not the file Self has open; when Result.Failed, no transaction is
   --  open
   procedure Lock_The_File_At_The_Path
     (Self : in out Store; Result : out Outcome) is
   begin
      Take_Write_Lock (Self, Result);
      if Result.Failed or else not Has_Moved (Self) then
         return;
      end if;
      Abandon_Turn (Self);
      Reopen (Self, Result);
      if Result.Failed then
         return;
      end if;
      Take_Write_Lock (Self, Result);
      if not Result.Failed and then Has_Moved (Self) then
         Abandon (Self, Moved_Away & ", and again as it was opened again",
                  Result);
      end if;
   end Lock_The_File_At_The_Path;

   procedure Begin_Turn
     (Self        : in out Store;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      State       : out Session_Table.Session;
      Memory      : out Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome) is
   begin
      --  A turn that raised between Begin_Turn and Commit_Turn never
      --  committed, so it never happened
      Abandon_Turn (Self);

      Lock_The_File_At_The_Path (Self, Result);
      if Result.Failed then
         State := Session_Table.Fresh (Chosen, Session_Key);
         Memory := Organs.Morag.Excerpts.Empty;
         return;
      end if;

      if Is_Last_Committed (Self, Session_Key) then
         State := Self.Last.State;
         Memory := Self.Last.Memory;
         Self.Read_Standing := Most_Recent;
         Self.Read_Rank := Self.Last.Rank;
         return;
      end if;
      Read_Session (Self, Chosen, Session_Key, False, State, Memory, Result);
   end Begin_Turn;

   procedure Begin_Long_Turn
     (Self        : in out Store;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      State       : out Session_Table.Session;
      Memory      : out Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome) is
   begin
      Abandon_Turn (Self);
      --  Its commit checks again, under the write lock
      if Has_Moved (Self) then
         Reopen (Self, Result);
         if Result.Failed then
            State := Session_Table.Fresh (Chosen, Session_Key);
            Memory := Organs.Morag.Excerpts.Empty;
            return;
         end if;
      end if;
      --  Outside a transaction the read is one of its own (autocommit),
      --  over once Read_Session has finished its statement
      Read_Session (Self, Chosen, Session_Key, True, State, Memory, Result);
   end Begin_Long_Turn;

   procedure Commit_Turn
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   is
      Write    : constant Query :=
        (case Self.Read_Standing is
            when Unknown     => Insert_Record,
            when Most_Recent => Update_Record,
            when Less_Recent => Update_Record_And_Use);
      Code     : Sqlite.Result_Code;
      Sessions : Interfaces.Integer_64 := 0;
      Rank     : Interfaces.Integer_64 := Self.Read_Rank;
      --  The session's rank of use once written
   begin
      Result := (others => <>);
      declare
         Record_Bytes : constant String :=
           Session_Records.Encoded (State, Memory);
      begin
         if Write = Insert_Record then
            Bind_Bytes (Self, Write, 1, Session_Key, Code);
         else
            Bind_Number (Self, Write, 1, Self.Read_Rank, Code);
         end if;
         if Code = Sqlite.OK then
            Bind_Bytes (Self, Write, 2, Record_Bytes, Code);
         end if;
         if Code = Sqlite.OK then
            Code := Run (Self, Write);
         end if;
         if Code = Sqlite.Row and then Write = Update_Record_And_Use then
            Rank := Sqlite.Column_Int64 (Self.Queries (Write), 0);
            Code := Run (Self, Write);
         elsif Code = Sqlite.Done and then Write = Insert_Record then
            Rank := Sqlite.Last_Insert_Rowid (Self.Db);
         end if;
         Finish (Self, Write);
      end;

      if Code = Sqlite.Done and then Self.Keeps_Budgets then
         Write_Budget_Log (Self, Session_Key, State, Code);
      end if;

      --  Counted by the insert's trigger
      if Code = Sqlite.Done and then Self.Read_Standing = Unknown then
         Code := Run (Self, Read_Tally);
         if Code = Sqlite.Row then
            Sessions := Sqlite.Column_Int64 (Self.Queries (Read_Tally), 0);
            Code := Run (Self, Read_Tally);
         end if;
         Finish (Self, Read_Tally);
      end if;

      if Code = Sqlite.Done
        and then Sessions > Interfaces.Integer_64 (Self.Capacity)
      then
         declare
            Over : constant Interfaces.Integer_64 :=
              Sessions - Interfaces.Integer_64 (Self.Capacity);
         begin
            Bind_Number (Self, Evict_Oldest, 1, Over, Code);
            if Code = Sqlite.OK then
               Code := Run (Self, Evict_Oldest);
            end if;
            Finish (Self, Evict_Oldest);
            if Code = Sqlite.Done then
               Body_Log.Info
                 ("session store full (" & Self.Capacity'Image
                  & " ): evicted" & Over'Image
                  & " least recently used session(s)");
            end if;
         end;
      end if;

      if Code = Sqlite.Done then
         Code := Run (Self, Commit);
         Finish (Self, Commit);
      end if;
      if Code = Sqlite.Done then
         Remember_Commit (Self, Session_Key, State, Memory, Rank);
      else
         Abandon (Self, "cannot commit the turn: " & Last_Error (Self), Result);
      end if;
   end Commit_Turn;

   --  Under the write lock: whether Session_Key's record is still what
   --  Self.Long_Read holds, its standing and rank taken as they are now
   procedure Read_Again
     (Self        : in out Store;
      Session_Key : String;
      Unchanged   : out Boolean;
      Result      : out Outcome)
   is
      Found : Boolean;
   begin
      Find_Record (Self, Session_Key, Found, Result);
      if Found then
         declare
            Held : String (1 .. Found_Length (Self))
            with Import, Address => Found_Address (Self);
         begin
            Unchanged := Self.Long_Read.Found
              and then Self.Long_Read.Bytes = Held;
         end;
         Finish (Self, Read_Record);
      else
         Unchanged := not Self.Long_Read.Found;
      end if;
   end Read_Again;

   procedure Commit_Long_Turn
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   is
      Unchanged : Boolean;
   begin
      Take_Write_Lock (Self, Result);
      if not Result.Failed and then Has_Moved (Self) then
         --  What the turn read is the old file's; the next turn opens the
         --  path again
         Abandon (Self, Moved_Away & " during this turn; nothing of this"
                  & " turn was kept", Result);
      elsif not Result.Failed then
         Read_Again (Self, Session_Key, Unchanged, Result);
      end if;
      Self.Long_Read := (others => <>);
      if Result.Failed then
         return;
      elsif not Unchanged then
         Abandon (Self, "the session changed in another body during this"
                  & " turn; nothing of this turn was kept", Result);
         return;
      end if;
      Commit_Turn (Self, Session_Key, State, Memory, Result);
   end Commit_Long_Turn;

   procedure Keep_Budgets (Self : in out Store) is
   begin
      Self.Keeps_Budgets := True;
   end Keep_Budgets;

   procedure Keep_Secret
     (Self   : in out Store;
      Secret : out Unbounded_String;
      Result : out Outcome)
   is
      Name : constant String := "'request_state_key'";
      Code : Sqlite.Result_Code;
   begin
      Secret := Null_Unbounded_String;
      Result := (Failed => False, Reason => Null_Unbounded_String);
      --  Made once, whichever body comes first: INSERT OR IGNORE keeps the
      --  first body's secret for all of them
      Execute (Self, "CREATE TABLE IF NOT EXISTS meta"
               & " (name TEXT PRIMARY KEY, value TEXT NOT NULL)", Code);
      if Code = Sqlite.OK then
         Execute (Self, "INSERT OR IGNORE INTO meta VALUES (" & Name
                  & ", lower(hex(randomblob(32))))", Code);
      end if;
      if Code = Sqlite.OK then
         Read_Text (Self, "SELECT value FROM meta WHERE name = " & Name,
                    Secret, Code);
      end if;
      if Code /= Sqlite.OK or else Length (Secret) /= 64 then
         Secret := Null_Unbounded_String;
         Result := Failure (Self, "cannot keep the requestState secret: "
                            & Last_Error (Self));
      end if;
   end Keep_Secret;

end Session_Store;
