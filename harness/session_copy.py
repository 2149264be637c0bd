"""Copying the body's sessions from an SQLite store (`--state FILE`) into PostgreSQL (`--state postgresql://...`),
for bodies that move off one machine (docs/scale-out.md). A command calls `copy_sessions` and prints what it
returns; this module has no command of its own.

Invariants:
- The file is read, never written: opened read-only, in one read transaction, so a body still serving on it
  leaves a consistent snapshot (its turns after the snapshot are not copied: stop the bodies first to miss none).
  A file of another schema than the store's (STORE_SCHEMA) is refused.
- The database's schema is the body's to make: the copy starts the body once on the URL, which makes or migrates
  the schema (and its secret) as at any start, or refuses the database in its own words; a schema of another
  version than the one this copy writes (DATABASE_SCHEMA) is refused. Then every row is written in one
  transaction: all of them or none.
- Sessions keep their order of use (the file's rank), after those already in the database; a session already
  there is left as it is (a body on the database has turned it since), counted as skipped, and so are its
  budget rows. The tally the cap counts follows, by the database's own trigger.
- The requestState secret stays the database's: a sampled call in flight across the move is refused as minted
  under another key, and the client's next call starts afresh.
- The URL is passed to libpq as given and shown only through `shown_url`.
"""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.body import database_client, default_organs
from harness.database import DatabaseUnavailable, shown_url
from harness.errors import ConfigError

# The SQLite store's PRAGMA user_version (Session_Store.Schema_Version) and the database's body_meta
# schema_version (Session_Repositories.Postgres.Schema_Version) this copy reads and writes.
STORE_SCHEMA = 3
DATABASE_SCHEMA = 1
# The body opens the database and exits at the end of its empty input: a start takes milliseconds, a server
# that does not answer is bounded by libpq's connect_timeout (the body's default is 10 s).
BODY_START_BOUND_S = 30.0

INSERT_SESSIONS = """
    WITH inserted AS (
        INSERT INTO body_sessions (key, record, used)
        SELECT key, record, nextval('body_session_use') FROM (SELECT * FROM copied_sessions ORDER BY rank) AS ranked
        ON CONFLICT (key) DO NOTHING
        RETURNING key)
    SELECT key FROM inserted"""


@dataclass(frozen=True)
class SessionsCopied:
    """What one copy did."""

    source: Path
    target: str  # the database, as shown_url shows it
    sessions: int  # copied
    skipped: int  # already in the database, left as they were
    budget_rows: int  # the copied sessions' budget log rows

    def lines(self) -> list[str]:
        return [f"sessions: copied {self.sessions} from {self.source} into {self.target}"
                + (f"; {self.skipped} already there were left as they are" if self.skipped else ""),
                f"budget log: {self.budget_rows} row(s) of the copied sessions",
                "requestState: the database's own secret (a sampled call in flight across the move starts afresh)"]


@dataclass(frozen=True)
class _Snapshot:
    sessions: list[tuple[bytes, bytes, int]]  # key, record, rank of use
    budget: list[tuple[bytes, int, int, int]]  # key, ended_ms, calls, tokens


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
            sessions = [(bytes(key), bytes(record), int(used)) for key, record, used
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
                                  f"{said[-1] if said else 'its stderr was empty'})")


def copy_sessions(store: Path, url: str, body: Path) -> SessionsCopied:
    """Copy the sessions of the SQLite store `store` into the database at `url`, whose schema the body `body` (or
    the dynamic build beside it) makes; ConfigError for a store that cannot be read, DatabaseUnavailable for a
    database that cannot be reached or used. Nothing is written unless everything is."""
    snapshot = _read_store(store)
    _make_schema(url, body)
    import psycopg  # noqa: PLC0415 (the postgresql extra: only a copy into a database needs it)
    try:
        with psycopg.connect(url) as db, db.transaction():
            version = db.execute("SELECT value FROM body_meta WHERE name = 'schema_version'").fetchone()
            if version is None or version[0] != str(DATABASE_SCHEMA):
                raise DatabaseUnavailable(f"{shown_url(url)}: its session store has schema version "
                                          f"{version[0] if version else 'none'}; this copy writes version "
                                          f"{DATABASE_SCHEMA}")
            inserted = _insert(db, snapshot)
            budget = _insert_budget(db, snapshot, inserted)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailable(f"{shown_url(url)}: nothing was copied: {first}") from None
    return SessionsCopied(store, shown_url(url), len(inserted), len(snapshot.sessions) - len(inserted), budget)


def _insert(db: Any, snapshot: _Snapshot) -> set[bytes]:
    """The file's sessions into body_sessions, in their order of use; the keys inserted."""
    db.execute("CREATE TEMP TABLE copied_sessions (key bytea, record bytea, rank bigint) ON COMMIT DROP")
    with db.cursor().copy("COPY copied_sessions FROM STDIN") as rows:
        for row in snapshot.sessions:
            rows.write_row(row)
    return {bytes(key) for (key,) in db.execute(INSERT_SESSIONS).fetchall()}


def _insert_budget(db: Any, snapshot: _Snapshot, inserted: set[bytes]) -> int:
    copied = [row for row in snapshot.budget if row[0] in inserted]
    if copied:
        with db.cursor().copy("COPY body_budget_calls (key, ended_ms, calls, tokens) FROM STDIN") as rows:
            for row in copied:
                rows.write_row(row)
    return len(copied)
