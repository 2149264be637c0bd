"""The one Hermes transport: a `RunRequest` in, a judged `RunOutcome` out.

Everything in the harness that calls Hermes goes through `HermesTransport.run`.

Invariants:
- Success needs all of: exit 0, non-empty stdout, Hermes's record of the run not saying it failed,
  and that record naming the provider and model that were asked for. Anything else is `ok=False`
  with a specific reason (see `outcome`); nothing is retried here (retries are a queue's policy).
- Checks that cost nothing run before the spawn: prompt size (`prompt_too_large`), the executable
  (`hermes_not_found`), the profile's home (`profile_not_found`), and the profile's configured
  fallback chain: a chain that could route to another provider or model refuses the run
  (`provider_fallback`), because Hermes offers no switch to turn it off for one run.
- The child gets `HERMES_HOME=<root>` and `HERMES_AUTOBOT_DELEGATED=1` on top of the caller's
  environment and the request's `env`, runs in a private empty directory outside any project (no
  stray AGENTS.md is injected), is killed with its whole tree at the deadline, and never outlives
  the caller (`process`).
- With a `journal`, the run's start is recorded (`journal.begin`) after those checks and before the
  spawn, and its spools live in the run folder the journal gives, so a caller killed mid-run leaves
  what settling it needs; a start that cannot be recorded refuses the run (`ledger_unwritable`). A
  cancelled command spawns nothing new (`cancelled`, nothing spent).
- Usage is Hermes's own when it has any; otherwise an estimate marked `source="estimate"`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.hermes import outcome as reasons
from harness.hermes.accounting import RunRecord, read_state_db, read_usage_file, session_id_from
from harness.hermes.classify import bare_failure, classify, first_line
from harness.hermes.command import PromptTooLarge, build_argv, check_prompt_fits
from harness.hermes.locate import (
    Route,
    configured_fallbacks,
    configured_route,
    find_executable,
    hermes_root,
    not_found_detail,
    profile_home,
    read_config,
)
from harness.hermes.outcome import RunOutcome, RunRequest, Usage
from harness.hermes.process import Completed, SpawnFailed, run_bounded

DELEGATED_ENV = "HERMES_AUTOBOT_DELEGATED"
# An answer is text for a human or a parser; 16 MiB is far past any of those and bounds memory.
DEFAULT_MAX_OUTPUT_BYTES = 16 << 20
# Hermes's stderr is logs and tracebacks; only its tail is read (the session id), so 4 MiB is ample.
DEFAULT_MAX_STDERR_BYTES = 4 << 20
# The empty folder each run works in, outside any project; a settler removes only folders named so.
CWD_PREFIX = "hermes-cwd-"


@dataclass(frozen=True)
class TransportSettings:
    """Where Hermes and its home are, and the transport's own bounds. None means "from the environment"."""

    hermes_bin: Path | None = None
    hermes_home: Path | None = None
    work_dir: Path | None = None
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    max_stderr_bytes: int = DEFAULT_MAX_STDERR_BYTES
    environ: Mapping[str, str] | None = field(default=None, repr=False)

    def env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ


@dataclass(frozen=True)
class RunSlot:
    """Where one run's spools go, and the descriptors (locks) its supervisor holds until the tree is gone."""

    run_dir: Path
    hold_fds: tuple[int, ...]


class JournalRefused(HarnessError):
    """The journal could not record the start of a run, so the run is not started."""


class Journal(Protocol):
    """The two-phase record of one run (above: `harness.ledger.journal.RunJournal`).

    `begin` is called after every check that costs nothing and before the spawn; it raises
    JournalRefused when the start cannot be recorded. The transport stores the run's outcome in
    `outcome` as soon as it has one, so a caller that fails afterwards can still settle it. Setting
    `stop` stops this run alone (its outcome is then `cancelled`)."""

    outcome: RunOutcome | None
    stop: threading.Event | None

    def begin(self, request: RunRequest, home: Path, cwd_dir: Path) -> RunSlot: ...


class Refusal(NamedTuple):
    """Why a run was not started (nothing spawned, nothing spent)."""

    reason: str
    detail: str


def delegated_marker(environ: Mapping[str, str]) -> str | None:
    """The value of HERMES_AUTOBOT_DELEGATED when this process runs inside a delegated run, else None."""
    value = environ.get(DELEGATED_ENV, "")
    return value if value not in ("", "0") else None


class HermesTransport:
    """Runs requests through the real `hermes` executable (see the module invariants)."""

    def __init__(self, settings: TransportSettings | None = None) -> None:
        self.settings = settings or TransportSettings()

    @property
    def root(self) -> Path:
        return hermes_root(self.settings.hermes_home, self.settings.env())

    def home_of(self, profile: str | None) -> Path:
        return profile_home(self.root, profile)

    def run(self, request: RunRequest, journal: Journal | None = None) -> RunOutcome:
        started_at, t0 = time.time(), time.monotonic()
        checked = self._preflight(request)
        if isinstance(checked, Refusal):
            return _refused(request, checked, started_at, t0)
        if cancellation.requested() is not None:
            return _refused(request, Refusal(reasons.CANCELLED, "the command was cancelled before Hermes was "
                                                                "started; nothing was spent"), started_at, t0)
        stop = journal.stop if journal is not None else None
        if stop is not None and stop.is_set():
            return _refused(request, Refusal(reasons.CANCELLED, f"the run was stopped by "
                                                                f"{cancellation.stop_cause(stop)} before Hermes "
                                                                f"was started; nothing was spent"), started_at, t0)
        executable, home, expected = checked
        work_parent = self.settings.work_dir
        if work_parent is not None:
            work_parent.mkdir(parents=True, exist_ok=True)
        cwd = Path(tempfile.mkdtemp(prefix=CWD_PREFIX, dir=work_parent))
        try:
            if journal is None:
                scratch = Path(tempfile.mkdtemp(prefix="hermes-run-", dir=work_parent))
                slot = RunSlot(scratch, ())
            else:
                try:
                    slot = journal.begin(request, home, cwd)
                except JournalRefused as exc:
                    return _refused(request, Refusal(reasons.LEDGER_UNWRITABLE, str(exc)), started_at, t0)
            outcome = self._spawn(request, executable, home, expected, slot, cwd, started_at, t0, stop)
            if journal is not None:
                journal.outcome = outcome
            return outcome
        finally:
            shutil.rmtree(cwd, ignore_errors=True)
            if journal is None:
                shutil.rmtree(slot.run_dir, ignore_errors=True)

    def _spawn(self, request: RunRequest, executable: Path, home: Path, expected: Route, slot: RunSlot, cwd: Path,
               started_at: float, t0: float, stop: threading.Event | None) -> RunOutcome:
        usage_file = slot.run_dir / "usage.json" if request.mode == "oneshot" else None
        try:
            completed = run_bounded(build_argv(executable, request, usage_file), env=self._child_env(request),
                                    cwd=cwd, spool_dir=slot.run_dir, timeout_s=request.timeout_s,
                                    max_stdout_bytes=self.settings.max_output_bytes,
                                    max_stderr_bytes=self.settings.max_stderr_bytes, hold_fds=slot.hold_fds,
                                    stop=None if stop is None else stop.is_set)
        except SpawnFailed as exc:
            return _refused(request, Refusal(reasons.HERMES_NOT_FOUND, str(exc)), started_at, t0)
        stderr = completed.stderr_tail.decode("utf-8", errors="replace")
        session_id = session_id_from(stderr)
        if usage_file is not None:
            record = read_usage_file(usage_file)
        else:
            record = read_state_db(home, session_id) if session_id else None
        return judge(request, completed, record, expected, stderr, started_at, cancellation.stop_cause(stop))

    def _preflight(self, request: RunRequest) -> Refusal | tuple[Path, Path, Route]:
        """(executable, home, expected route), or the Refusal that keeps the run from starting."""
        try:
            check_prompt_fits(request.prompt)
        except PromptTooLarge as exc:
            return Refusal(reasons.PROMPT_TOO_LARGE, str(exc))
        executable = find_executable(self.settings.hermes_bin, self.settings.env())
        if executable is None:
            return Refusal(reasons.HERMES_NOT_FOUND, not_found_detail(self.settings.hermes_bin, self.settings.env()))
        home = self.home_of(request.profile)
        if not home.is_dir():
            return Refusal(reasons.PROFILE_NOT_FOUND,
                           f"Hermes profile {request.profile or 'default'!r} has no home at {home}")
        config = read_config(home)
        expected = Route(request.provider, request.model)
        if request.provider is None and request.model is None:
            expected = configured_route(config)
        risky = [r for r in configured_fallbacks(config) if not expected.matches(r)]
        if risky:
            return Refusal(reasons.PROVIDER_FALLBACK, (
                f"profile {request.profile or 'default'} configures a fallback chain "
                f"({', '.join(map(str, risky))}); Hermes could answer with another provider or model than "
                f"{expected}, so the run was not started. Remove fallback_providers/fallback_model from "
                f"{home / 'config.yaml'} or use a profile without them."))
        return executable, home, expected

    def _child_env(self, request: RunRequest) -> dict[str, str]:
        env = {**self.settings.env(), **request.env}
        env["HERMES_HOME"] = str(self.root)
        env[DELEGATED_ENV] = "1"
        return env


def judge(request: RunRequest, completed: Completed, record: RunRecord | None, expected: Route, stderr: str,
          started_at: float, stopped_by: str = cancellation.signal_name(cancellation.CALLER_REQUEST)) -> RunOutcome:
    """The verdict on a finished (or killed) run; pure, so every branch is testable without a process.
    `stopped_by` says what a run stopped alone (CALLER_REQUEST) was stopped by."""
    stdout = completed.stdout.decode("utf-8", errors="replace")
    text = stdout.strip()
    usage = record.usage if record is not None else Usage.estimate(len(request.prompt), len(text))
    warnings: list[str] = []
    if record is None and not completed.timed_out:
        warnings.append("hermes_record_missing: usage is an estimate; provider and model could not be checked")
    answered = record.answered if record is not None else None

    def verdict(ok: bool, reason: str | None, detail: str) -> RunOutcome:
        return RunOutcome(request=request, ok=ok, reason=reason, detail=detail, text=text if ok else text[:4000],
                          exit_code=completed.exit_code, started_at=started_at,
                          duration_ms=int(completed.duration_s * 1000), usage=usage,
                          session_id=record.session_id if record is not None else session_id_from(stderr),
                          answered_provider=answered.provider if answered else None,
                          answered_model=answered.model if answered else None,
                          stderr_tail=stderr[-2000:], warnings=tuple(warnings))

    if completed.cancelled is not None:
        by = stopped_by if completed.cancelled == cancellation.CALLER_REQUEST else (
            cancellation.signal_name(completed.cancelled))
        return verdict(False, reasons.CANCELLED,
                       f"cancelled by {by}; Hermes was sent SIGTERM, "
                       f"then its tree was killed ({completed.killed_count} leftover process(es))")
    if completed.timed_out:
        return verdict(False, reasons.timed_out(request.timeout_s),
                       f"Hermes did not finish within {request.timeout_s:g} s; killed it and "
                       f"{completed.killed_count} descendant process(es)")
    if completed.overflowed:
        return verdict(False, reasons.OUTPUT_TOO_LARGE,
                       f"Hermes wrote more than the transport's cap on {completed.overflowed_stream}; killed it")
    hermes_failed = record.failed if record is not None else bare_failure(stdout)
    if completed.exit_code != 0 or hermes_failed or not text:
        cause = classify(stdout + "\n" + stderr, request.provider)
        if cause is None:
            cause = (reasons.exited(completed.exit_code) if completed.exit_code not in (0, None)
                     else reasons.EMPTY_OUTPUT if not text else reasons.PROVIDER_ERROR)
        said = first_line(stdout) or first_line(stderr) or "(no output)"
        return verdict(False, cause, f"Hermes exited {completed.exit_code}: {said}")
    if record is not None and len(record.routes) > 1:
        return verdict(False, reasons.PROVIDER_FALLBACK,
                       f"asked for {expected}, but {', '.join(map(str, record.routes))} answered")
    if answered is not None and not expected.matches(answered):
        return verdict(False, reasons.PROVIDER_FALLBACK, f"asked for {expected}, but {answered} answered")
    return verdict(True, None, "")


def _refused(request: RunRequest, refusal: Refusal, started_at: float, t0: float) -> RunOutcome:
    return RunOutcome(request=request, ok=False, reason=refusal.reason, detail=refusal.detail, text="",
                      exit_code=None, started_at=started_at, duration_ms=_ms_since(t0), usage=Usage.not_run())


def _ms_since(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)
