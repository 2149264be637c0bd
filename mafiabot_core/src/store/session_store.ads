--  The sessions of law L1 kept in an SQLite file (--state FILE), so that
--  a session outlives the body and several bodies on one file (Hermes's
--  CLI and its gateway) share it.  The cycle still sees only the session
--  record of Session_Table; this unit alone knows of SQLite.
--
--  Contract:
--  - A turn is one of two kinds, and either gives what one body serving
--    every turn would have given, or fails and leaves the store as it was.
--  - A short turn (the stub's: it waits on nothing outside the body) holds
--    the write lock through:
--    Begin_Turn takes it (BEGIN IMMEDIATE) and reads the latest committed
--    record of its session (fresh when the store has none), Commit_Turn
--    writes the new one and commits.  Turns of one session from several
--    bodies serialize on the lock.
--  - A long turn (one that waits on a client's model, up to its deadline)
--    holds no lock while it runs: Begin_Long_Turn reads the record in a
--    read transaction of its own and ends it; Commit_Long_Turn takes the
--    write lock, reads the record again and commits only if it is the one
--    read (the same bytes, or still none): a session another body turned
--    meanwhile fails the long turn, which then kept nothing.  Its rank of
--    use is that of the second read, as other sessions may have moved.
--  - Either way the caller writes the turn's reply only after the commit
--    succeeded, so a reply a client has seen is never undone by a crash
--    of the body.
--  - A session's record is found by its full key (L1): no other session's
--    record is ever read for it.  Records are Session_Records' bytes; one
--    that does not decode fails its turn, and only its turn.
--  - At most Capacity sessions are kept: committing a new session past it
--    evicts the least recently used (the table's rowid is the rank of
--    use), in the same transaction, logged on stderr.  A session that is
--    already the most recently used keeps its rank: the order of use is
--    the same, and its turn rewrites one page, its record's.
--  - The tally of sessions the cap is held to is kept by triggers on the
--    table (schema 3): any insert or delete counts, so a session's row
--    deleted by hand (how an operator forgets a user) leaves it exact.
--  - Durability: WAL journal.  Synchronous NORMAL (the default) keeps
--    every committed turn through a kill of the process (SIGKILL, a
--    crash); only a power loss or an OS crash may lose the last turns,
--    never the file's consistency.  FULL (Full_Sync) also keeps them
--    through a power loss, at the cost of an fsync per turn.
--  - Open costs the same with 100,000 sessions as with none: it reads the
--    schema, never the sessions (but once, when it migrates a store of
--    schema 2: it adds the triggers and recounts the tally); a turn reads
--    and writes its own record (moved to the table's end unless the
--    session was already the most recent), and the tally only when it
--    makes one.  A turn of the session this body committed last, with
--    nothing written to the store since (SQLite's data version says so),
--    reads nothing: the record it would read is the one this body wrote.
--  - The store is the file at its path.  Every turn checks, in its write
--    transaction, that the file the body has open is still the one at the
--    path (SQLite compares their inodes): a file removed (forgetting its
--    sessions) or replaced under a running body is closed and the path
--    opened again, created if need be, so that no body goes on committing
--    to a file no other body will ever open.  A turn whose path cannot be
--    opened again fails, naming why, and the next turn tries again; so
--    does one whose old WAL journal is still beside the new file (the new
--    file read through the old file's journal would be corrupt).  A long
--    turn that read the old file keeps nothing.
--  - Every failure is an Outcome naming the file, never an exception.

with Ada.Strings.Unbounded;
with Interfaces;
with Organs.Morag.Excerpts;
with Organs.Sets;
with Session_Table;

private with File_Identities;
private with Sqlite;

package Session_Store is

   use Ada.Strings.Unbounded;

   Schema_Version : constant := 3;
   --  The store's PRAGMA user_version; a store of another is refused, but
   --  one of version 2, which Open migrates

   type Outcome is record
      Failed : Boolean := False;
      Reason : Unbounded_String;
      --  When Failed: the file, a colon, and what went wrong, on one line
   end record;

   function Diagnostic (Result : Outcome) return String is
     ("session store " & To_String (Result.Reason));
   --  The line a log gives a failure

   type Store is tagged limited private;

   function Is_Open (Self : Store) return Boolean;

   procedure Open
     (Self            : in out Store;
      Path            : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Full_Sync       : Boolean;
      Result          : out Outcome)
   with Pre  => not Is_Open (Self) and then Path'Length > 0,
        Post => Is_Open (Self) = not Result.Failed;
   --  Open Path, creating it (and its schema) if it does not exist, and
   --  take the write lock once to prove it usable (migrating a store of
   --  schema 2 under it): a corrupt file, a directory, a read-only file or
   --  directory, a store of another schema or one locked for longer than
   --  Busy_Timeout_Ms (in all: Open never waits much longer) fail here

   procedure Begin_Turn
     (Self        : in out Store;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      State       : out Session_Table.Session;
      Memory      : out Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   with Pre => Is_Open (Self) and then Organs.Sets.Is_Complete (Chosen);
   --  Start a short turn's transaction and read its session's latest
   --  committed record into State and Memory (fresh, as the Chosen organs
   --  make it, and empty, when new).  When Result.Failed, no transaction is left open.

   procedure Commit_Turn
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   with Pre => Is_Open (Self);
   --  Write State and Memory as the session's record, most recently used, evict past
   --  the capacity, and commit the transaction Begin_Turn started.  When
   --  Result.Failed, the transaction is rolled back: the store keeps the
   --  session as it was before the turn.

   procedure Begin_Long_Turn
     (Self        : in out Store;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      State       : out Session_Table.Session;
      Memory      : out Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   with Pre => Is_Open (Self) and then Organs.Sets.Is_Complete (Chosen);
   --  Read a long turn's session as Begin_Turn does, in a read transaction
   --  that is over when this returns: no lock is held while the turn runs

   procedure Commit_Long_Turn
     (Self        : in out Store;
      Session_Key : String;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : out Outcome)
   with Pre => Is_Open (Self);
   --  Take the write lock and commit State as Commit_Turn does, if the
   --  session's record is still the one Begin_Long_Turn read; if it is
   --  not, roll back and fail: the store keeps the other body's turn

   procedure Abandon_Turn (Self : in out Store);
   --  Roll back the turn Begin_Turn started, if it is still open: for a
   --  turn that raised before Commit_Turn, so that the write lock is not
   --  held from other bodies until this one's next turn (a long turn holds
   --  nothing to roll back)

   procedure Keep_Budgets (Self : in out Store)
   with Pre => not Is_Open (Self);
   --  Budget (--energy budget), before Open: Open makes the table
   --  budget_calls where missing, and every turn reads its session's
   --  budget log from it and writes it back in its commit, so that a
   --  restart does not refill a budget (a body without a budget neither
   --  makes nor reads the table)

   procedure Keep_Secret
     (Self   : in out Store;
      Secret : out Unbounded_String;
      Result : out Outcome)
   with Pre  => Is_Open (Self),
        Post => Result.Failed or else Length (Secret) = 64;
   --  The store's secret (64 hex digits, 256 random bits), made the first
   --  time a body asks for it and kept in the store's meta table beside the
   --  sessions, so that every body on the file shares it: what a
   --  requestState is authenticated with (--cognition sampling)

   procedure Close (Self : in out Store)
   with Post => not Is_Open (Self);
   --  Finish with the store: the last body to close it folds its WAL
   --  journal back into the file, so the next one to open it reads no
   --  journal.  A body killed instead leaves the journal, which the next
   --  Open reads once (at most SQLite's 1,000-page autocheckpoint).

private

   type Query is
     (Begin_Write, Commit, Rollback, Read_Record, Insert_Record,
      Update_Record, Update_Record_And_Use, Read_Tally, Evict_Oldest,
      Read_Budget, Forget_Budget, Log_Budget);

   subtype Budget_Query is Query range Read_Budget .. Log_Budget;
   --  Prepared only by a store that keeps budgets
   --  The statements a turn runs, prepared once at Open

   type Standing is (Unknown, Most_Recent, Less_Recent);
   --  Where the session Begin_Turn read stands in the order of use:
   --  Unknown when the store has no record of it yet

   type Prepared_Queries is array (Query) of Sqlite.Statement;

   type Record_Read is record
      Found : Boolean := False;
      Bytes : Unbounded_String;
      --  When Found: the record's bytes as read
   end record;
   --  What Begin_Long_Turn read of its session, for Commit_Long_Turn to
   --  hold the store's record against

   type Last_Commit is record
      Known   : Boolean := False;
      Key     : Unbounded_String;
      State   : Session_Table.Session;
      Memory  : Organs.Morag.Excerpts.Excerpt_Memory;
      Rank    : Interfaces.Integer_64 := 0;
      --  Its rank of use (the table's rowid)
      Version : Interfaces.Unsigned_32 := 0;
   end record;
   --  When Known: the session this body committed last, as committed, and
   --  the store's data version just after that commit.  A turn that finds
   --  the version unchanged under its write lock knows that nothing has
   --  been written to the store since (by this body or another), so State
   --  is still the session's latest record and the most recently used:
   --  it need not read it again.

   type Opened_Files is record
      Db, Wal, Shm : File_Identities.Identity;
   end record;
   --  The files at the store's path, and at its journal's and index's, as
   --  Open found them

   type Store is tagged limited record
      Db          : Sqlite.Connection := Sqlite.No_Connection;
      Path        : Unbounded_String;
      Capacity    : Positive := 10_000;
      Busy_Timeout_Ms : Positive := 1;
      Full_Sync   : Boolean := False;
      --  As Open was given them, for opening the path again (Reopen)
      Opened      : Opened_Files;
      Queries     : Prepared_Queries := [others => Sqlite.No_Statement];
      Read_Standing : Standing := Unknown;
      --  The standing of the session Begin_Turn read
      Read_Rank   : Interfaces.Integer_64 := 0;
      --  And its rank of use, unless Unknown
      Long_Read   : Record_Read;
      --  What the long turn in flight read, if one is
      Last        : Last_Commit;
      Keeps_Budgets : Boolean := False;
   end record;

   function Is_Open (Self : Store) return Boolean is
     (Sqlite."/=" (Self.Db, Sqlite.No_Connection));

end Session_Store;
