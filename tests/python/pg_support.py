"""A throwaway PostgreSQL cluster for the tests: Debian's server, `initdb` into a temp folder, a Unix socket there.

Invariants:
- The cluster lives in a folder of its own under the system's temp dir (made for it, removed after):
  data, socket and log. Nothing listens on TCP (`listen_addresses=''`); the socket is the only way in.
- PostgreSQL refuses to run as root, and CI runs as root: then initdb and the server run as Debian's
  `postgres` user (`runuser`), the folder handed to it; the tests connect as the cluster's superuser
  (`mafiabot`, trust authentication on the socket), whoever they run as.
- `start` either returns a running cluster or raises `ClusterUnavailable` with one line saying why
  (no server installed, no `postgres` user, initdb or the start failed with its log's last line), which
  the fixtures turn into a skip with that line. `stop` is bounded (a fast shutdown, then an immediate one).
- Every test gets a database of its own (`new_database`), so tests share a cluster, never a table.
- One role must give a password (`PASSWORD_ROLE`, scram-sha-256 on the socket: the one `pg_hba.conf` line
  written before the trust lines), so that a password read from `PGPASSFILE` is proven read; its password is
  made per cluster and is in no URL. The role itself is made at the first `password_database`, so a run
  that never asks for it pays nothing.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

SUPERUSER = "mafiabot"
# How every skip for want of a cluster starts: the run's summary counts them under it (conftest.py).
PG_SKIP = "PostgreSQL tests skipped"
RUN_AS = "postgres"
# The role whose every connection must give its password; the superuser's stay trusted.
PASSWORD_ROLE = "mafiabot_pw"  # noqa: S105 (a role's name; its password is made per cluster)
# initdb and a start take a second or two; a loaded 2-core machine stretches that several times.
START_BOUND_S = 60.0
STOP_BOUND_S = 30.0
# How often to look whether init has reaped a killed postmaster (it takes a few milliseconds).
REAP_POLL_S = 0.005


def database_of(url: str) -> str:
    """The database a URL of this module's (`Cluster.url`, `Cluster.password_url`) names."""
    return url.split("/", 4)[3].split("?", 1)[0]


class ClusterUnavailable(Exception):
    """PostgreSQL cannot be started on this machine; the message is the one line a skip shows."""


def server_bindir() -> Path | None:
    """Debian's newest server (`/usr/lib/postgresql/<version>/bin`), else a `pg_ctl` on the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


class Cluster:
    def __init__(self, *, fsync: bool) -> None:
        self.fsync = fsync
        self.folder: Path | None = None
        self.bindir: Path | None = None
        self._names = itertools.count(1)
        self._as: list[str] = []
        self.password = secrets.token_hex(16)
        self._password_role_made = False
        # The environment of the first start, the server's at every restart too (not a test's of the moment).
        self._env: dict[str, str] = {}

    @property
    def data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        assert self.folder is not None
        return f"postgresql:///{database}?host={self.folder}&user={SUPERUSER}"

    def start(self) -> Cluster:
        self.bindir = server_bindir()
        self._env = dict(os.environ)
        if self.bindir is None:
            raise ClusterUnavailable("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl, no pg_ctl on "
                                     "the PATH): `make deps` installs Debian's postgresql")
        self.folder = Path(tempfile.mkdtemp(prefix="mafiabot-pg-"))
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam(RUN_AS)
            except KeyError:
                raise ClusterUnavailable(f"running as root, and there is no {RUN_AS!r} user to run PostgreSQL as "
                                         f"(it refuses root)") from None
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            self._as = ["runuser", "-u", RUN_AS, "--"]
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "--no-sync",
                  what="initdb")
        hba = self.data / "pg_hba.conf"
        # First: pg_hba.conf's first matching line decides, and initdb's trust every role.
        hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text())
        self._start_server()
        return self

    def _start_server(self) -> None:
        assert self.folder is not None
        options = (f"-k {self.folder} -c listen_addresses='' -c fsync={'on' if self.fsync else 'off'} "
                   f"-c max_connections=200 -c shared_buffers=32MB -c recovery_init_sync_method=syncfs")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "server.log"), "-w",
                  "-t", str(int(START_BOUND_S)), "start", what="the server's start")

    def _children_of(self, parent: int) -> list[int]:
        children = []
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            except OSError:
                continue  # ended while the table was read
            if fields.get("PPid", "").strip() == str(parent):
                children.append(int(status.parent.name))
        return children

    def crash(self) -> int:
        """SIGKILL the whole server at once (the postmaster and every backend, as a machine's crash would end
        them: no shutdown checkpoint, no goodbye to a client), and wait until every one of them is gone; how
        many processes were killed. What the cluster keeps is what its WAL had flushed."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGSTOP)  # it forks no backend while its children are listed
        pids = [*self._children_of(postmaster), postmaster]  # the postmaster last: no backend notices it gone
        watched = []
        for pid in pids:
            with suppress(ProcessLookupError):
                watched.append(os.pidfd_open(pid))
                os.kill(pid, signal.SIGKILL)
        try:
            deadline = time.monotonic() + STOP_BOUND_S
            for fd in watched:  # readable once its process has ended
                if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    raise AssertionError(f"a server process outlived its SIGKILL by {STOP_BOUND_S} s")
        finally:
            for fd in watched:
                os.close(fd)
        # A new postmaster refuses a data directory whose lock file names a live pid, and a zombie is one: the
        # killed postmaster must have been reaped (by init, which no event reports) before `restart`.
        while Path(f"/proc/{postmaster}").exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"the killed postmaster {postmaster} was not reaped within {STOP_BOUND_S} s")
            time.sleep(REAP_POLL_S)
        return len(pids)

    def restart(self) -> None:
        """Start the server again on the same data directory (after `crash`: it recovers from its WAL first)."""
        self._start_server()

    def new_database(self) -> str:
        """A fresh database of this cluster; its URL."""
        import psycopg
        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def password_url(self, database: str) -> str:
        """The URL `PASSWORD_ROLE` connects to `database` by: no password in it."""
        assert self.folder is not None
        return f"postgresql://{PASSWORD_ROLE}@/{database}?host={self.folder}"

    def password_database(self) -> str:
        """A fresh database owned by `PASSWORD_ROLE` (so it may make its tables); its URL, without the password,
        which only `write_passfile`'s file gives."""
        import psycopg
        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            if not self._password_role_made:
                # password_encryption is scram-sha-256 by default: the password is kept as its verifier
                admin.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{self.password}'".encode())
                self._password_role_made = True
            admin.execute(f'CREATE DATABASE "{name}" OWNER {PASSWORD_ROLE}'.encode())
        return self.password_url(name)

    def write_passfile(self, path: Path, password: str | None = None) -> Path:
        """A `PGPASSFILE` giving `PASSWORD_ROLE`'s password (or `password`) for this cluster's socket folder alone,
        readable by its owner only (libpq ignores a file others may read)."""
        assert self.folder is not None
        path.write_text(f"{self.folder}:*:*:{PASSWORD_ROLE}:{self.password if password is None else password}\n")
        path.chmod(0o600)
        return path

    def stop(self) -> None:
        if self.folder is None:
            return
        if self.bindir is not None and (self.data / "postmaster.pid").exists():
            for mode in ("fast", "immediate"):
                done = subprocess.run([*self._as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode,
                                       "-w", "-t", str(int(STOP_BOUND_S)), "stop"], capture_output=True, check=False,
                                      timeout=STOP_BOUND_S + 5)
                if done.returncode == 0:
                    break
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def _run(self, program: str, *args: str, what: str) -> None:
        assert self.bindir is not None and self.folder is not None
        try:
            done = subprocess.run([*self._as, str(self.bindir / program), *args], capture_output=True, text=True,
                                  cwd=self.folder, timeout=START_BOUND_S, check=False, env=self._env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.stop()
            raise ClusterUnavailable(f"PostgreSQL could not be started: {what} failed: {exc}") from None
        if done.returncode != 0:
            log = self.folder / "server.log"
            tail = (log.read_text(errors="replace") if log.exists() else "") + done.stderr
            last = (tail.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            self.stop()
            raise ClusterUnavailable(f"PostgreSQL could not be started: {what} failed: {last}")


@contextmanager
def throwaway_cluster(*, fsync: bool) -> Iterator[Cluster]:
    """A started cluster, stopped on the way out; the calling test (or fixture) skipped, saying why, when none
    can be started."""
    cluster = Cluster(fsync=fsync)
    try:
        cluster.start()
    except ClusterUnavailable as exc:
        pytest.skip(f"{PG_SKIP}: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()
