"""serve's jobs, from the project's files into the team's database: the jobs' part of `copy-to-database`
(`harness.copying`, whose invariants hold here too).

Invariants:
- A job whose server died is settled first, from its ledger, exactly as any reader of it would settle it
  (`JobRunner.get`); one still running afterwards (its server alive, or a run of it in flight) refuses the copy:
  its settlement would land in the files after it. So only settled jobs are copied, whole and as they are.
- A job is the same job when it is equal whole: a settled job never changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.copying import Candidate, StoreCopy, busy, refused, to_write
from harness.database import Database, RowRefused
from harness.serve.job_stores import RUNNING, PgJobStore, UnknownJob, file_job_store
from harness.serve.jobs import JobRunner


class JobsCopier:
    """The jobs of a server started in `project_root`, into the database's jobs."""

    store = "jobs"

    def __init__(self, project_root: Path) -> None:
        self.files = file_job_store(project_root)
        self.reader = JobRunner(project_root)  # never opened: it reads (and settles the dead), it runs nothing

    @contextmanager
    def held_still(self) -> Iterator[None]:
        running = []
        for job_id in self.files.job_ids():
            try:
                job = self.reader.get(job_id)
            except UnknownJob:
                continue  # left behind by `copy`, which says why
            if job["state"] == RUNNING:
                running.append(job_id)
        if running:
            raise busy(f"job(s) in {self.files.where} are still running", running,
                       "`serve` has stopped and they are settled")
        yield

    def prepare(self, url: str) -> None:
        """Nothing: the jobs' table is the harness's schema, migrated in the copy's transaction."""

    def copy(self, database: Database) -> StoreCopy:
        result = StoreCopy(self.store, self.files.where)
        jobs: list[Candidate[dict[str, Any]]] = []
        for job_id in self.files.job_ids():
            try:
                job = self.files.read(job_id)
            except UnknownJob as exc:
                result.leave(f"{job_id}.json", str(exc))
                continue
            if job.get("job_id") != job_id or not isinstance(job.get("runner"), str):
                result.leave(f"{job_id}.json", "its job_id is not its file's name, or it names no runner")
            else:
                jobs.append(Candidate(job_id, job, f"job {job_id}", job))
        target = PgJobStore(database.url, session=database)
        for job in to_write(result, jobs, target.jobs_named([c.key for c in jobs])):
            try:
                target.write(job)
            except RowRefused as exc:
                raise refused(self.store, f"job {job['job_id']}", exc) from None
            result.copied += 1
        return result

    def committed(self, database: str) -> None:
        """Nothing: a settled job is an answer kept, and a copy of it in both stores is the same answer."""
