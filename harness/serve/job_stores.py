"""Where `serve`'s jobs are kept, and how a job's runner is known to be alive: files, or the team's database.

`JobStore` is the seam `JobRunner` (harness.serve.jobs) goes through. The file store is the default: a job
is `<state dir>/serve-jobs/<job id>.json`, the runner's liveness an flock on `runners/<runner id>.lock`. With
serve's `--database`, a job is a row of `serve_jobs` and the runner's liveness a session-level advisory lock,
so any server on any machine finds a job by its handle and knows whether its runner still lives.

Invariants:
- `open` takes the runner's liveness lock, held until `close` or the process's death (the kernel drops the
  flock; PostgreSQL drops the session's lock); nothing is made before it, so a server that never starts a
  job leaves nothing behind. It raises `JobStoreUnusable` naming where the jobs cannot be kept.
- `write` replaces a job whole (an atomic rename, or one upsert): a reader sees one whole state or another.
- `read` returns a job or raises `UnknownJob`; `runner_alive` tells a runner whose lock is held.
- A database session that dropped is replaced by the statement that finds it so (run again on the new one), its
  runner lock taken again; between the drop and then, other servers see the runner gone (and may settle its
  running jobs from the ledger).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from harness.database import (
    RUNNER_LOCK,
    Database,
    DatabaseUnavailable,
    RowRefused,
    advisory_key,
    connect,
    jsonb_text,
    shown_url,
)
from harness.durable import DurableWriteError, atomic_write_json, is_flocked
from harness.errors import HarnessError
from harness.settings import state_dir
from harness.strict_json import InputRejected, open_regular

T = TypeVar("T")
JOBS_DIR = "serve-jobs"
RUNNERS_DIR = "runners"
RUNNING, SETTLED = "running", "settled"


class JobStoreUnusable(HarnessError):
    """The jobs cannot be kept where the server was told to keep them (on the first job, which is then refused)."""


class UnknownJob(HarnessError):
    """No job has this id."""


class JobStore(Protocol):
    """The jobs of `serve` and their runners' liveness; above it `JobRunner`, below it files or a database."""

    @property
    def where(self) -> str:
        """The store as a user is shown it."""

    def open(self, runner_id: str) -> None:
        """Hold `runner_id`'s liveness lock until `close`."""

    def close(self) -> None:
        """Let go of the runner's lock (a runner that never opened has nothing to let go of)."""

    def write(self, job: dict[str, Any]) -> None:
        """Replace the job whole; DurableWriteError when it cannot be kept."""

    def read(self, job_id: str) -> dict[str, Any]:
        """The job; UnknownJob when there is none by that id, or it cannot be read."""

    def runner_alive(self, runner_id: str) -> bool:
        """Whether the runner `runner_id` still holds its lock."""


def _checked(document: Any, job_id: str) -> dict[str, Any]:
    if not isinstance(document, dict) or document.get("state") not in (RUNNING, SETTLED):
        raise UnknownJob(f"the job file of {job_id} is not a job")
    return document


class FileJobStore:
    """The jobs as files of the project's state folder (the default)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._runner_fd: int | None = None
        self._runner_id: str | None = None

    @property
    def where(self) -> str:
        return str(self.root)

    def open(self, runner_id: str) -> None:
        runners = self.root / RUNNERS_DIR
        try:
            runners.mkdir(parents=True, exist_ok=True)
            for stale in runners.glob("runner-*.lock"):  # the lock files of runners that are gone
                if not is_flocked(stale, missing=True):
                    stale.unlink(missing_ok=True)
            # Locked under a dot-name first, so no other server ever sees this runner's file unlocked.
            pending = runners / f".{runner_id}.lock"
            fd = os.open(pending, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # e.g. the project root is a regular file or read-only
            raise JobStoreUnusable(f"cannot keep serve's jobs in {runners}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(pending, runners / f"{runner_id}.lock")
        except OSError as exc:
            os.close(fd)
            with contextlib.suppress(OSError):  # the refusal below is the news; a leftover dot-file is inert
                pending.unlink()
            raise JobStoreUnusable(f"cannot lock serve's runner in {runners}: {exc.strerror or exc}") from None
        self._runner_fd, self._runner_id = fd, runner_id

    def close(self) -> None:
        if self._runner_fd is not None:
            os.close(self._runner_fd)
            (self.root / RUNNERS_DIR / f"{self._runner_id}.lock").unlink(missing_ok=True)
            self._runner_fd = None

    def write(self, job: dict[str, Any]) -> None:
        atomic_write_json(self.root / f"{job['job_id']}.json", job, sync=False)

    def read(self, job_id: str) -> dict[str, Any]:
        # A regular file only: a FIFO or a device in a job's place must not hold the call (its worker thread
        # cannot be cancelled, so a stuck read would hold serve's shutdown too). Read whole: the file is this
        # store's own write, and an envelope is already bounded by its answers' max_chars.
        try:
            with open_regular(self.root / f"{job_id}.json") as handle:
                document = json.loads(handle.read())
        except FileNotFoundError:
            raise UnknownJob(f"no job {job_id} in {self.root}") from None
        except (OSError, InputRejected, ValueError) as exc:
            raise UnknownJob(f"the job file of {job_id} is unreadable: {exc}") from None
        return _checked(document, job_id)

    def job_ids(self) -> list[str]:
        """The ids of the job files kept here (a store that was never opened has none)."""
        return sorted(path.stem for path in self.root.glob("job-*.json")) if self.root.is_dir() else []

    def runner_alive(self, runner_id: str) -> bool:
        if "/" in runner_id:
            return False
        return is_flocked(self.root / RUNNERS_DIR / f"{runner_id}.lock", missing=False)


def file_job_store(project_root: Path) -> FileJobStore:
    """The file store of the jobs of a server started in `project_root`."""
    return FileJobStore(state_dir(project_root) / JOBS_DIR)


class PgJobStore:
    """The jobs as rows of the database at `url`; the runner's liveness its session's advisory lock."""

    def __init__(self, url: str, session: Database | None = None) -> None:
        """`session`: one the caller opened (and closes), so the store's writes join its transaction."""
        self.url = url
        self._session: Database | None = session
        self._owns_session = session is None
        self._runner_id: str | None = None

    @property
    def where(self) -> str:
        return shown_url(self.url)

    def open(self, runner_id: str) -> None:
        try:
            session = self._database()
            taken = session.try_lock(RUNNER_LOCK, advisory_key(runner_id))
        except DatabaseUnavailable as exc:
            raise JobStoreUnusable(f"cannot keep serve's jobs in {self.where}: {exc}") from None
        if not taken:
            raise JobStoreUnusable(f"the runner id {runner_id} is already held in {self.where}")
        self._runner_id = runner_id

    def close(self) -> None:
        if self._session is not None and self._owns_session:
            self._session.close()
            self._session = None
        self._runner_id = None

    def write(self, job: dict[str, Any]) -> None:
        try:
            self._on_session(lambda session: session.execute(
                "INSERT INTO serve_jobs (job_id, runner, state, job) VALUES (%s, %s, %s, %s::jsonb) ON CONFLICT "
                "(job_id) DO UPDATE SET runner = excluded.runner, state = excluded.state, job = excluded.job, "
                "updated_at = now()", (job["job_id"], job["runner"], job["state"], jsonb_text(job))))
        except (DatabaseUnavailable, RowRefused) as exc:
            raise DurableWriteError(str(exc)) from None

    def read(self, job_id: str) -> dict[str, Any]:
        try:
            rows = self._on_session(lambda session: session.execute("SELECT job FROM serve_jobs WHERE job_id = %s",
                                                                    (job_id,)))
        except DatabaseUnavailable as exc:
            raise UnknownJob(f"the job {job_id} cannot be read: {exc}") from None
        if not rows:
            raise UnknownJob(f"no job {job_id} in {self.where}")
        return _checked(rows[0][0], job_id)

    def jobs_named(self, job_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The jobs of these ids that the database holds."""
        rows = self._database().execute("SELECT job_id, job FROM serve_jobs WHERE job_id = ANY(%s)", (job_ids,))
        return {str(job_id): job for job_id, job in rows}

    def runner_alive(self, runner_id: str) -> bool:
        try:
            return self._on_session(lambda session: session.holder_of(RUNNER_LOCK, advisory_key(runner_id))) is not None
        except DatabaseUnavailable:
            return True  # unknown is not dead: a job is never settled `runner_gone` on a guess

    def _on_session(self, work: Callable[[Database], T]) -> T:
        """`work` on the store's session; once more on a new one when the first finds its own dropped (each
        statement of the store reads, or writes a job whole, so running it again changes nothing)."""
        try:
            return work(self._database())
        except DatabaseUnavailable:
            if not (self._owns_session and self._session is not None and self._session.broken):
                raise
        return work(self._database())

    def _database(self) -> Database:
        """The runner's session, or one of its own for a server that reads jobs before it starts one. A session
        that dropped is replaced, and the runner's lock, which went with it, taken again: the server's jobs are
        kept and its liveness seen again from the next statement on, not lost until it restarts."""
        if self._session is not None and self._owns_session and self._session.broken:
            self._session.close()
            self._session = None
        if self._session is None:
            session = connect(self.url)
            if self._runner_id is not None and not session.try_lock(RUNNER_LOCK, advisory_key(self._runner_id)):
                session.close()
                raise DatabaseUnavailable(f"the runner id {self._runner_id} is held by another session of "
                                          f"{self.where}")
            self._session = session
        return self._session
