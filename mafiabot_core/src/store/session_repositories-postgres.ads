--  The sessions in a PostgreSQL database (--state postgresql://...), so that
--  bodies on several machines (Hermes gateway hosts, a CLI elsewhere) share
--  them: the same contract as the SQLite store (Session_Repositories.Stored)
--  and the same record bytes (Session_Records), in bytea.
--
--  Contract, beside Session_Repositories':
--  - A turn is one transaction, committed before Within_Turn returns, in
--    two round trips to the server (libpq's pipeline mode: the begin, the
--    lock and the read sent together, then the writes and the commit, each
--    a statement the connection prepared once); a statement refused in
--    either rolls the whole turn back.  A
--    Short turn holds its session's advisory lock (a transaction-level one,
--    keyed by a hash of the session's key) from its read to its commit, so
--    turns of one session from several bodies serialize, and turns of other
--    sessions go on beside it; a wait longer than the busy timeout
--    (--state-busy-ms) fails the turn.  A Long turn reads its session in a
--    transaction of its own and holds nothing while it waits on the client;
--    its commit takes the lock, reads the record again and writes only if
--    it is the one read (compare-and-set), else keeps nothing.
--  - At most Capacity sessions: a turn that makes a new session past it
--    evicts the least recently used in its own transaction (logged on
--    stderr); a session whose row another turn has read to write, or is
--    writing, at that moment is passed over (SKIP LOCKED), so no turn
--    waits on another's and none loses the session it is turning.
--    The count is kept by a trigger in a tally row, so no turn counts rows.
--  - The budget log (--energy budget) is a table of its own, whose rows
--    go with their session (a foreign key, on delete cascade); the recall
--    memory is in the record, as in the SQLite store.
--  - The schema is versioned (the body_meta table) and made or migrated
--    in place at Open under an advisory lock, so bodies starting at once
--    make it once; a database of a newer version is refused, never
--    written.  The store-wide secret (requestState's key) is kept in
--    body_meta, made with the schema: the first body's proposal stands.
--  - A failure names the server (host, port, database), never the URL,
--    which may hold a password.  A connection found lost at a turn's
--    start (the server restarted, or ended the session, while the body was
--    idle) is made again, and the turn runs.  One that drops during a turn
--    fails that turn, which then kept nothing (the server rolls back what
--    it had not committed); the next turn connects again.  Once the COMMIT is
--    on its way, the body cannot know: the server may have made it durable
--    and died before it answered, so that failure says the turn may or may
--    not have been kept, never that nothing was.
--  - libpq reads the URL: its parameters (sslmode, service, passfile,
--    options, connect_timeout...) and PGPASSFILE, PGSERVICEFILE, PGHOST...
--    apply as for psql.  The body writes the URL nowhere.
--
--  Only the dynamic build (mafiabot-dynamic) links libpq; in the static
--  one Open refuses every URL, naming the build to use.

with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;

package Session_Repositories.Postgres is

   function Names_A_Database (State : String) return Boolean is
     (Ada.Strings.Fixed.Head (State, 13) = "postgresql://"
      or else Ada.Strings.Fixed.Head (State, 11) = "postgres://");
   --  Whether a --state is a PostgreSQL URL rather than an SQLite file

   Schema_Version : constant := 1;
   --  What body_meta's schema_version holds once Open has made or
   --  migrated the schema

   Secret_Digits : constant := 64;

   procedure Open
     (Url             : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Keeps_Budgets   : Boolean;
      Proposed_Secret : String;
      Opened          : out Repository_Access;
      Secret          : out Ada.Strings.Unbounded.Unbounded_String;
      Result          : out Status)
   with Pre  => Names_A_Database (Url)
                and then Proposed_Secret'Length = Secret_Digits,
        Post => (if Result.Failed then Opened = null
                 else Opened /= null
                      and then Ada.Strings.Unbounded.Length (Secret)
                               = Secret_Digits);
   --  Connect to Url, make or migrate the schema and keep the store's
   --  secret (Proposed_Secret, unless another body's is already kept):
   --  Result.Failed, naming the server and why, when the database cannot be
   --  reached or used, or when this build has no PostgreSQL client.
   --  Keeps_Budgets: every turn reads and writes its session's budget log.
   --  Busy_Timeout_Ms bounds every wait for a lock another body holds (the
   --  server's lock_timeout): a turn that waits longer fails, naming it.

end Session_Repositories.Postgres;
