"""The body's sessions of an SQLite store (`--state FILE`) into PostgreSQL (`--state postgresql://...`): the
sessions' part of `copy-to-database` (`harness.copying`, whose invariants hold here too), for bodies that move off
one machine (docs/scale-out.md).

Invariants:
- The file is read, never written: opened read-only, in one read transaction, when the copy holds its sources
  still, so a body still serving on it leaves a consistent snapshot (its turns after the snapshot are not copied:
  stop the bodies first to miss none). A file of another schema than the store's (STORE_SCHEMA) is refused.
- The database's session schema is the body's to make: before the copy's transaction the body is started once on
  the URL, which makes or migrates the schema (and its secret) as at any start, or refuses the database in its
  own words. A dry run does not start it, so it writes nothing: on a database without that schema it reports
  every session as to be copied. A schema of another version than the one this copy writes (DATABASE_SCHEMA) is
  refused.
- A session is the same session by its key (the room it is the conversation of), whatever its record: a record
  is rewritten at every turn, and a body on the database may have turned it since it was copied, or begun it
  there. So a session the database holds is left as it is and counted `already_there`, with its budget rows;
  it is never a conflict (a copy into another team's database would meet other rooms' keys, not these). Copied
  sessions keep their order of use (the file's rank), after those already in the database; the tally the cap
  counts follows, by the database's own trigger.
- The requestState secret stays the database's: a sampled call in flight across the move is refused as minted
  under another key, and the client's next call starts afresh.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.body import database_client, default_organs
from harness.copying import Candidate, StoreCopy, refused, to_write
from harness.database import Database, DatabaseUnavailable, RowRefused, shown_url
from harness.errors import ConfigError

# The SQLite store's PRAGMA user_version (Session_Store.Schema_Version) and the database's body_meta
# schema_version (Session_Repositories.Postgres.Schema_Version) this copy reads and writes.
STORE_SCHEMA = 3
DATABASE_SCHEMA = 1
# The body opens the database and exits at the end of its empty input: a start takes milliseconds, a server
# that does not answer is bounded by libpq's connect_timeout (the body's default is 10 s).
BODY_START_BOUND_S = 30.0

INSERT_SESSIONS = """
    INSERT INTO body_sessions (key, record, used)
    SELECT key, record, nextval('body_session_use') FROM (SELECT * FROM copied_sessions ORDER BY rank) AS ranked
    ON CONFLICT (key) DO NOTHING
    RETURNING key"""


@dataclass(frozen=True)
class _Session:
    key: bytes
    record: bytes
    rank: int  # of use, in the file


@dataclass(frozen=True)
class _Snapshot:
    sessions: list[_Session]
    budget: list[tuple[bytes, int, int, int]]  # key, ended_ms, calls, tokens


def same_session(there: Any, ours: Any) -> bool:  # noqa: ARG001 (the key is the session: see the invariants)
    return True


class SessionsCopier:
    """The sessions and budget rows of the SQLite store at `path` into the database's session store, whose schema
    `body` (or the dynamic build beside it, `database_client`) makes."""

    store = "sessions"

    def __init__(self, path: Path, body: Path) -> None:
        self.path = path
        self.body = body
        self.snapshot: _Snapshot | None = None
        self.schema_made = False

    @contextmanager
    def held_still(self) -> Iterator[None]:
        self.snapshot = _read_store(self.path)
        try:
            yield
        finally:
            self.snapshot = None

    def prepare(self, url: str) -> None:
        _make_schema(url, self.body)
        self.schema_made = True

    def copy(self, database: Database) -> StoreCopy:
        assert self.snapshot is not None, "copy runs inside held_still"
        result = StoreCopy(self.store, str(self.path))
        candidates = [Candidate(session.key.hex(), session.key,
                                f"session {session.key.decode('utf-8', 'backslashreplace')}", session)
                      for session in self.snapshot.sessions]
        if not _has_schema(database, self.schema_made):
            result.copied = len(candidates)  # a dry run on a database the body has not made its store in yet
            return result
        held = database.execute("SELECT key FROM body_sessions WHERE key = ANY(%s)",
                                ([session.key for session in self.snapshot.sessions],))
        missing = to_write(result, candidates, {bytes(key).hex(): bytes(key) for (key,) in held}, same_session)
        try:
            inserted = self._insert(database, missing)
        except RowRefused as exc:
            raise refused(self.store, f"{len(missing)} session(s) of {self.path}", exc) from None
        result.copied = len(inserted)
        result.already_there += len(missing) - len(inserted)  # begun by a body on the database meanwhile
        return result

    def _insert(self, database: Database, missing: list[_Session]) -> set[bytes]:
        """The sessions into body_sessions in their order of use, and their budget rows; the keys inserted."""
        assert self.snapshot is not None
        database.execute("CREATE TEMP TABLE copied_sessions (key bytea, record bytea, rank bigint) ON COMMIT DROP")
        database.copy_rows("COPY copied_sessions FROM STDIN",
                           ((session.key, session.record, session.rank) for session in missing))
        inserted = {bytes(key) for (key,) in database.execute(INSERT_SESSIONS)}
        database.copy_rows("COPY body_budget_calls (key, ended_ms, calls, tokens) FROM STDIN",
                           (row for row in self.snapshot.budget if row[0] in inserted))
        return inserted

    def committed(self, database: str) -> None:
        """Nothing: the file is left as it was; a body still on it turns a session the database no longer follows."""


def _has_schema(database: Database, schema_made: bool) -> bool:
    """Whether the body's session store is in the database, of the version this copy writes."""
    if not database.execute("SELECT to_regclass('body_meta') IS NOT NULL")[0][0]:
        if schema_made:
            raise DatabaseUnavailable(f"{database.shown}: the body started on it made no session store")
        return False
    version = database.execute("SELECT value FROM body_meta WHERE name = 'schema_version'")
    if not version or version[0][0] != str(DATABASE_SCHEMA):
        raise DatabaseUnavailable(f"{database.shown}: its session store has schema version "
                                  f"{version[0][0] if version else 'none'}; this copy writes version "
                                  f"{DATABASE_SCHEMA}")
    return True


def _read_store(path: Path) -> _Snapshot:
    if not path.is_file():
        raise ConfigError(f"the session store {path} does not exist")
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)) as db:
            db.execute("BEGIN")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != STORE_SCHEMA:
                raise ConfigError(f"the session store {path} has schema version {version}; this copy reads "
                                  f"version {STORE_SCHEMA} (a body of this checkout migrates it when it opens it)")
            sessions = [_Session(bytes(key), bytes(record), int(used)) for key, record, used
                        in db.execute("SELECT key, record, used FROM sessions ORDER BY used")]
            has_budget = db.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'budget_calls'"
                                    ).fetchone() is not None
            budget = ([(bytes(key), int(ended), int(calls), int(tokens)) for key, ended, calls, tokens
                       in db.execute("SELECT key, ended_ms, calls, tokens FROM budget_calls")] if has_budget else [])
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"the session store {path} cannot be read: {exc}") from None
    return _Snapshot(sessions, budget)


def _make_schema(url: str, body: Path) -> None:
    """The body's own start on the database: it makes or migrates the schema, or refuses it in one line."""
    organs = default_organs()
    argv = [str(database_client(body)), *(["--organs", str(organs)] if organs is not None else []), "--no-soul",
            "--state", url]
    try:
        started = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=BODY_START_BOUND_S, check=False)
    except subprocess.TimeoutExpired:
        raise DatabaseUnavailable(f"{shown_url(url)}: the body did not open the database within "
                                  f"{BODY_START_BOUND_S:g} s") from None
    if started.returncode != 0:
        said = started.stderr.strip().splitlines()
        raise DatabaseUnavailable(f"the body refuses the database (exit code {started.returncode}: "
                                  f"{said[-1] if said else 'its stderr was empty'}); nothing was copied")
