"""The PostgreSQL database a team's drainers share: the connection, its schema, and the session-bound locks.

`--database postgresql://...` (or `$MAFIABOT_DATABASE_URL`) moves the autobot queue and the cost ledger
from the project's files into one database (see docs/scale-out.md). The driver is psycopg 3 on Debian's
libpq (the `postgresql` extra); it is imported only when a database is named, so the file backends need
neither.

Invariants:
- The URL goes to libpq as given: its parameters (`sslmode`, `options`, `service`, `passfile`...) pass
  through, and `PGPASSFILE` / `PGSERVICEFILE` work as for psql. The harness never writes it anywhere:
  what it shows and records is `shown_url`, with any password replaced by `***`.
- Every connection is in autocommit: a statement is its own transaction unless it runs inside
  `transaction()`, which commits on the way out or rolls back on an exception; a dropped connection
  inside it leaves nothing half-written (PostgreSQL rolls the transaction back).
- The schema is versioned (`mafiabot_schema`, one row per migration applied) and migrated in place on
  connect, under a transaction-level advisory lock, so drainers starting at once migrate it once. A
  database migrated by a newer harness is refused, never written.
- A lease and the intent lock are session-level advisory locks: PostgreSQL drops them when the session
  ends, so a drainer that dies (its connection closed by the kernel, or ended by the server's TCP
  keepalives when its machine is gone) releases everything it held without anyone's clock deciding it.
- A connection the server refuses, or one that drops, is a `DatabaseUnavailable` naming `shown_url`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from harness.durable import Holder, LockHeld
from harness.errors import ConfigError, HarnessError

if TYPE_CHECKING:
    import psycopg

# Namespaces (the first key of the two-key advisory locks), so the locks of one kind never meet another's.
MIGRATION_LOCK = 0x6D616601
LEASE_LOCK = 0x6D616602
INTENT_LOCK = 0x6D616603
RUNNER_LOCK = 0x6D616604
COPY_LOCK = 0x6D616605
# How long to wait for the server to answer a connection; libpq's own `connect_timeout` in the URL wins.
CONNECT_TIMEOUT_S = 10
# Defaults for libpq's TCP settings, so a server whose machine vanished (no reset ever comes) fails the
# session within about a minute instead of keeping a drainer waiting: client-side keepalives while the
# connection is idle, and tcp_user_timeout (ms) for a statement in flight, whose unacknowledged data TCP
# would otherwise retransmit for about 15 minutes on Linux. Parameters of the same name in the URL win.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3,
              "tcp_user_timeout": 60_000}

# Append-only: a migration, once released, is never edited; a new one is added at the end.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "queue and ledger", """
        CREATE TABLE queue_items (
            seq           bigserial PRIMARY KEY,
            item_id       text NOT NULL UNIQUE,
            state         text NOT NULL CHECK (state IN ('pending', 'running', 'done', 'dead_letter')),
            enqueued_at   text NOT NULL,
            not_before    double precision,
            attempts      integer NOT NULL DEFAULT 0,
            intent_hash   text NOT NULL,
            intent        jsonb NOT NULL,
            history       jsonb NOT NULL DEFAULT '[]',
            last_envelope jsonb,
            claimed_by    text,
            claimed_at    timestamptz
        );
        CREATE INDEX queue_items_due ON queue_items (seq) WHERE state = 'pending';
        CREATE INDEX queue_items_running ON queue_items (seq) WHERE state = 'running';
        CREATE TABLE ledger (
            seq               bigserial PRIMARY KEY,
            record_id         text NOT NULL UNIQUE,
            started_record_id text,
            queue_item        text,
            record            jsonb NOT NULL,
            written_at        timestamptz NOT NULL DEFAULT now()
        );
        -- A started run is settled exactly once, whoever settles it: the database refuses a second.
        CREATE UNIQUE INDEX ledger_one_settlement ON ledger (started_record_id) WHERE started_record_id IS NOT NULL;
        CREATE INDEX ledger_by_item ON ledger (queue_item) WHERE queue_item IS NOT NULL;
    """),
    (2, "serve's jobs", """
        CREATE TABLE serve_jobs (
            job_id     text PRIMARY KEY,
            runner     text NOT NULL,
            state      text NOT NULL CHECK (state IN ('running', 'settled')),
            job        jsonb NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX serve_jobs_running ON serve_jobs (runner) WHERE state = 'running';
    """),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


class DatabaseUnavailable(HarnessError):
    """The database could not be reached, or the connection dropped."""


class RowRefused(HarnessError):
    """The server refused a statement's values (a constraint, a value out of a column's range, a character jsonb
    cannot hold); the transaction it ran in is rolled back."""


# A JSON text's \u0000 escape (its backslash not itself escaped), which jsonb refuses.
_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


# A surrogate code point in a str is a lone one (json.loads pairs the others), which UTF-8 cannot encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def jsonb_text(document: Any) -> str:
    """`document` as the JSON text a `%s::jsonb` parameter takes. jsonb cannot hold a NUL character nor a lone
    surrogate (a model's answer may carry either, and the file stores keep them): each is kept as U+FFFD, so the
    row is written, marked, rather than refused with the run it accounts for."""
    text = _NUL_ESCAPE.sub(r"\1\\ufffd", json.dumps(document, ensure_ascii=False, default=str))
    return _SURROGATE.sub("\ufffd", text)


_PASSWORD = re.compile(r"(?P<head>^[a-z]+://[^/@:]*:)[^/@]*(?P<at>@)")
# A password libpq would not take for one (a '/' in it: libpq then reads the user as a host) is masked too, up
# to the last '@': its owner meant it as a password.
_LOOSE_PASSWORD = re.compile(r"(?P<head>^[a-z]+://[^/@:]*:).*(?P<at>@)")
_PASSWORD_PARAM = re.compile(r"(?P<head>[?&]password=)[^&]*", re.IGNORECASE)


def shown_url(url: str) -> str:
    """`url` with any password replaced by `***`: the only form of it the harness shows or records. The
    masked text is read back as libpq reads it; where that still finds a password (one with a `/` in it, a
    percent-encoded `password` key) or reads nothing, only the parts libpq names are shown, password left out."""
    masked = _PASSWORD.sub(r"\g<head>***\g<at>", url)
    masked = _PASSWORD_PARAM.sub(r"\g<head>***", _LOOSE_PASSWORD.sub(r"\g<head>***\g<at>", masked)
                                 if masked == url else masked)
    read_back = _conninfo(masked)
    if read_back is not None and read_back.get("password") in (None, "***"):
        return masked
    parts = _conninfo(url)
    scheme = url.split("://", 1)[0] if "://" in url else "postgresql"
    if parts is None:
        return f"{scheme}://... (not a URL libpq takes)"
    user = parts.pop("user", "")
    parts.pop("password", None)
    host, port, dbname = parts.pop("host", ""), parts.pop("port", ""), parts.pop("dbname", "")
    shown = f"{scheme}://{user}:***@{host}{':' + port if port else ''}/{dbname}"
    return shown + ("?" + "&".join(f"{key}={value}" for key, value in sorted(parts.items())) if parts else "")


def holds_password(url: str) -> bool:
    """Whether `url` spells a password, in its user part or as a parameter (as libpq reads it, where a driver is
    installed to ask): what must never be written into a file the harness writes."""
    return bool(_PASSWORD.search(url) or _PASSWORD_PARAM.search(url) or (_conninfo(url) or {}).get("password"))


def _conninfo(url: str) -> dict[str, str] | None:
    """What libpq reads `url` as, None when it cannot (or no driver is installed to ask)."""
    try:
        import psycopg  # noqa: PLC0415
    except ImportError:
        return None
    try:
        return {key: str(value) for key, value in psycopg.conninfo.conninfo_to_dict(url).items()}
    except psycopg.ProgrammingError:
        return None


def _scrubbed(detail: str, url: str) -> str:
    """libpq's message about `url` without its password, should libpq have quoted it."""
    password = (_conninfo(url) or {}).get("password")
    return detail.replace(password, "***") if password else detail


def application_name() -> str:
    """Who a session is, as `pg_stat_activity` and a refused intent lock show it."""
    return f"mafiabot-harness {socket.gethostname()} pid {os.getpid()}"[:63]


def advisory_key(text: str) -> int:
    """A signed 32-bit key for the second half of a two-key advisory lock."""
    return zlib.crc32(text.encode("utf-8")) - (1 << 31)


class Database:
    """One session with the team's database (see the module invariants)."""

    def __init__(self, connection: psycopg.Connection[Any], url: str) -> None:
        self.connection = connection
        self.url = url  # in memory only, for a store that joins this session; shown and recorded as `shown`
        self.shown = shown_url(url)

    def execute(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; its rows (none for a statement that returns none)."""
        with self._statement():
            cursor = self.connection.execute(query.encode("utf-8"), params or None)
            return cursor.fetchall() if cursor.description is not None else []

    def copy_rows(self, statement: str, rows: Iterable[tuple[Any, ...]]) -> None:
        """Run a `COPY ... FROM STDIN` statement with `rows`: many rows in one round trip."""
        with self._statement(), self.connection.cursor().copy(statement.encode("utf-8")) as copying:
            for row in rows:
                copying.write_row(row)

    @contextmanager
    def _statement(self) -> Iterator[None]:
        """The driver's errors of one statement, as the harness's."""
        import psycopg  # noqa: PLC0415 (the driver is optional: imported only when a database is named)
        try:
            yield
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(f"the database {self.shown} dropped the connection: "
                                      f"{_first_line(exc)}") from None
        except (psycopg.DataError, psycopg.IntegrityError) as exc:
            raise RowRefused(f"the database {self.shown} refused a row: {_first_line(exc)}") from None

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        import psycopg  # noqa: PLC0415
        try:
            with self.connection.transaction():
                yield self
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(f"the database {self.shown} dropped the connection: "
                                      f"{_first_line(exc)}") from None

    def try_lock(self, namespace: int, key: int) -> bool:
        """A session-level advisory lock, without waiting; whether it was taken."""
        return bool(self.execute("SELECT pg_try_advisory_lock(%s, %s)", (namespace, key))[0][0])

    def unlock(self, namespace: int, key: int) -> None:
        self.execute("SELECT pg_advisory_unlock(%s, %s)", (namespace, key))

    def holder_of(self, namespace: int, key: int) -> str | None:
        """The application name of the session holding an advisory lock, when one does."""
        rows = self.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid "
            "AND l.objsubid = 2 AND l.granted", (namespace, key & 0xFFFFFFFF))
        return str(rows[0][0]) if rows else None

    @property
    def broken(self) -> bool:
        """Whether the connection was lost (the server ended the session, or the network did)."""
        return bool(self.connection.broken or self.connection.closed)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(url: str, *, migrated: bool = True) -> Database:
    """A session with the database at `url`, its schema migrated (unless `migrated` is False: the caller migrates
    it inside a transaction of its own); ConfigError when the driver is missing, DatabaseUnavailable when the
    server cannot be reached."""
    try:
        import psycopg  # noqa: PLC0415
    except ImportError:
        raise ConfigError("a database was named, but psycopg is not installed: pip install "
                          "'mafiabot-harness[postgresql]' (it uses the system's libpq, Debian's libpq5)") from None
    given = _conninfo(url)
    if given is None:
        # libpq's own message quotes the URL, or the token it could not read: a password among them.
        raise ConfigError(f"the database URL {shown_url(url)} is not one libpq takes (postgresql://user@host:port/"
                          f"dbname?param=value, its parts percent-encoded)")
    defaults: dict[str, Any] = {name: value for name, value in KEEPALIVES.items() if name not in given}
    if "connect_timeout" not in given:
        defaults["connect_timeout"] = CONNECT_TIMEOUT_S
    if "application_name" not in given:
        defaults["application_name"] = application_name()
    try:
        connection = psycopg.connect(url, autocommit=True, **defaults)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"the database URL {shown_url(url)} is not one libpq takes: "
                          f"{_scrubbed(_first_line(exc), url)}") from None
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot connect to the database {shown_url(url)}: "
                                  f"{_scrubbed(_first_line(exc), url)}") from None
    database = Database(connection, url)
    if not migrated:
        return database
    try:
        migrate(database)
    except BaseException:
        database.close()
        raise
    return database


def migrate(database: Database) -> int:
    """Apply the migrations this database lacks (once, however many sessions start at once); its version."""
    if database.execute("SELECT to_regclass('mafiabot_schema') IS NOT NULL")[0][0]:
        current = int(database.execute("SELECT coalesce(max(version), 0) FROM mafiabot_schema")[0][0])
        if current == SCHEMA_VERSION:
            return current  # the common case, without the lock every starting drainer would queue on
    with database.transaction():
        database.execute("SELECT pg_advisory_xact_lock(%s, 0)", (MIGRATION_LOCK,))
        database.execute("CREATE TABLE IF NOT EXISTS mafiabot_schema (version integer PRIMARY KEY, name text NOT "
                         "NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        current = int(database.execute("SELECT coalesce(max(version), 0) FROM mafiabot_schema")[0][0])
        if current > SCHEMA_VERSION:
            raise ConfigError(f"the database {database.shown} has schema version {current}, newer than this "
                              f"harness knows ({SCHEMA_VERSION}); upgrade mafiabot-harness. Nothing was written")
        for version, name, statements in MIGRATIONS:
            if version > current:
                database.execute(statements)
                database.execute("INSERT INTO mafiabot_schema (version, name) VALUES (%s, %s)", (version, name))
    return SCHEMA_VERSION


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class SessionLock:
    """A non-blocking lock held by this session until released or until the session ends: the intent lock of
    a delegation whose ledger is in the database, `HolderLock`'s counterpart across machines."""

    def __init__(self, database: Database, namespace: int, name: str, label: str = "") -> None:
        self.database, self.namespace, self.name, self.label = database, namespace, name, label
        self.key = advisory_key(name)
        self._held = False

    def acquire(self, started_at: str) -> SessionLock:  # noqa: ARG002 (HolderLock's signature; the session names its holder)
        """Take the lock; LockHeld naming the session that holds it when another does."""
        if not self.database.try_lock(self.namespace, self.key):
            holder = self.database.holder_of(self.namespace, self.key)
            raise LockHeld(f"the lock {self.name} in {self.database.shown}", Holder(None, None, holder))
        self._held = True
        return self

    @property
    def fd(self) -> int | None:
        """No descriptor: the session holds the lock, so a child cannot inherit it."""
        return None

    def release(self) -> None:
        if self._held:
            self._held = False
            self.database.unlock(self.namespace, self.key)

    def __enter__(self) -> SessionLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
