"""Settings resolved below both edges: what a caller named, the variables and the defaults, turned into the typed,
frozen settings the features take.

The command line passes its flags, `serve` its start-up options and a tool's arguments; both call the same
resolvers, so a tool finds the queue, the registry, the sentinel config and the ledger exactly as the matching
command does, and neither edge builds the other's argument objects. What a caller named is always a value or
None (not named); the precedence, "named, else the variable, else the default", is `settings.given`, written once.

Invariants:
- Every path a caller or a variable names is resolved here once, and an unusable one is a `ConfigError` naming
  where it came from (`--queue`, `$MAFIABOT_AUTOBOT_QUEUE`), never the value of another source.
- `ReadRoots.confine` is the one check of a file a host names through `serve` (a plan, an intent's project root):
  the path is resolved (symlinks followed, `..` collapsed) BEFORE it is compared, and it must then lie under the
  project root or under a folder the operator named at start-up (`serve --allow-dir DIR`). Its refusal names the
  path and the allowed folders, never anything read from the file (nothing is read before the check).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness import settings
from harness.autobot.queue import Queue, QueueStore
from harness.autopilot.config import load_sentinel
from harness.autopilot.kernel import KernelSettings
from harness.autopilot.plan import Plan
from harness.dispatch.registry import Registry, load_registry
from harness.errors import ConfigError
from harness.hermes import TransportSettings
from harness.hermes.locate import HERMES_HOME_ENV
from harness.ledger import default_ledger_path

# What a caller may name a path as; None (or an empty text) is "not named".
Named = str | os.PathLike[str] | None
# A project root that decides only when nothing else is named: resolved then (a callable), so that a project root
# that cannot be resolved does not stop a command whose queue or ledger is named.
Project = Path | Callable[[], Path]


class OutsideRoots(ConfigError):
    """A path a host named resolves outside every folder it may read."""


@dataclass(frozen=True)
class ReadRoots:
    """The folders a host may name files under: the project root and the operator's `--allow-dir` folders,
    each resolved once when the server starts."""

    roots: tuple[Path, ...]

    @classmethod
    def of(cls, project_root: Path, allowed: Iterable[str | os.PathLike[str]] = ()) -> ReadRoots:
        if project_root.exists() and not project_root.is_dir():
            raise ConfigError(f"--project-root: {project_root} is not a directory")
        named = [settings.resolved(folder, "--allow-dir") for folder in allowed]
        for folder in named:
            if not folder.is_dir():
                raise ConfigError(f"--allow-dir: {folder} is not an existing directory")
        return cls(tuple(dict.fromkeys([project_root.resolve(), *named])))

    def confine(self, given: str, what: str, base: Path | None = None) -> Path:
        """`given` (relative to `base`, default the project root) resolved, if it lies under one of the roots;
        OutsideRoots naming `what` otherwise."""
        path = Path(given).expanduser()
        path = path if path.is_absolute() else (base or self.roots[0]) / path
        try:
            real = path.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
            raise OutsideRoots(f"{what}: {given} cannot be resolved: {exc}") from None
        if any(real == root or real.is_relative_to(root) for root in self.roots):
            return real
        allowed = ", ".join(str(root) for root in self.roots)
        raise OutsideRoots(f"{what}: {given} resolves to {real}, outside the folders this server reads ({allowed}); "
                           f"the operator can add one with `serve --allow-dir DIR`")


def named_hermes_home(explicit: Named, environ: Mapping[str, str] | None = None) -> Path | None:
    """The Hermes home the operator named (`--hermes-home`, else an exported $HERMES_HOME), absolute; None when
    neither is set, so a configuration written from it leaves Hermes's own default to Hermes."""
    chosen = settings.given(explicit, "--hermes-home", HERMES_HOME_ENV, environ)
    return chosen.resolved() if chosen is not None else None


def transport(hermes: Named = None, hermes_home: Named = None) -> TransportSettings:
    """Where Hermes and its home are, as named (`--hermes`, `--hermes-home`); what is not named is looked up
    in the environment when a run starts (`harness.hermes.locate`)."""
    return TransportSettings(hermes_bin=Path(hermes) if hermes else None,
                             hermes_home=Path(hermes_home) if hermes_home else None)


def project_root(explicit: Named = None, environ: Mapping[str, str] | None = None) -> Path:
    """The worktree a command acts on: `--project-root`, else $MAFIABOT_PROJECT_ROOT, else the current directory."""
    return settings.project_root(explicit, environ)


def queue(explicit: Named, project: Project, environ: Mapping[str, str] | None = None, *,
          database: str | None = None) -> QueueStore:
    """The database's queue when `database` (a libpq URL, `settings.database_url`) is given; else `--queue`, else
    $MAFIABOT_AUTOBOT_QUEUE, else the queue of `project` (an intent's own root when enqueueing, so the item and its
    ledger share one root; else the project root)."""
    if database is not None:
        from harness.autobot.pg_queue import PgQueue  # noqa: PLC0415 (its driver is optional)
        return PgQueue(database)
    return file_queue(explicit, project, environ)


def file_queue(explicit: Named, project: Project, environ: Mapping[str, str] | None = None) -> Queue:
    """The queue's folder: `--queue`, else $MAFIABOT_AUTOBOT_QUEUE, else the queue of `project`."""
    chosen = settings.given(explicit, "--queue", settings.AUTOBOT_QUEUE_ENV, environ)
    return Queue(chosen.resolved()) if chosen is not None else Queue.for_project(_project(project))


def ledger_path(explicit: Named, project: Project, variable: str | None = None,
                environ: Mapping[str, str] | None = None) -> Path:
    """`--ledger`, else `variable` (auto-pilot's, which a parent kernel sets for its children), else the
    project's ledger."""
    chosen = settings.given(explicit, "--ledger", variable, environ)
    return chosen.resolved() if chosen is not None else default_ledger_path(_project(project))


def session_store(explicit: Named) -> Path | None:
    """`--state FILE`, an SQLite session store to copy, else None: no variable names one, since a body's store is
    named by the entry that starts it, and a copy brings sessions along only when asked to."""
    chosen = settings.given(explicit, "--state")
    return chosen.resolved() if chosen is not None else None


def _project(project: Project) -> Path:
    return project if isinstance(project, Path) else project()


def registry(explicit: Named = None, plan: Plan | None = None) -> Registry:
    """`--registry`, else the plan's `registry:`, else $MAFIABOT_AGENT_REGISTRY, else dispatch's defaults."""
    if explicit:
        return load_registry(Path(explicit))
    return load_registry(plan.registry if plan is not None else None)


@dataclass(frozen=True)
class PlanChoices:
    """What a caller named for checking or running a plan (None: not named, so the variable, else the default,
    decides), and the project it acts on."""

    project_root: Path
    transport: TransportSettings = field(default_factory=TransportSettings)
    ledger: Named = None
    registry: Named = None
    sentinel: Named = None
    report: Named = None
    database: str | None = None

    def kernel_settings(self, plan: Plan) -> KernelSettings:
        """The kernel's settings for `plan`; PlanInvalid (sentinel) or RegistryError when a named file is unusable."""
        return KernelSettings(project_root=self.project_root,
                              ledger_path=ledger_path(self.ledger, self.project_root, settings.AUTOPILOT_LEDGER_ENV),
                              registry=registry(self.registry, plan),
                              sentinel=load_sentinel(Path(self.sentinel) if self.sentinel else None),
                              transport=self.transport,
                              report_path=settings.resolved(self.report, "--report") if self.report else None,
                              database=self.database)


@dataclass(frozen=True)
class ServeSettings:
    """What `serve` runs with: its project root, where Hermes is, the folders a host may name files under, and
    the database its queue, jobs and ledger live in (None: the project's files)."""

    project_root: Path
    transport: TransportSettings
    read_roots: ReadRoots
    database: str | None = None

    @classmethod
    def of(cls, project: Named = None, allowed: Iterable[str | os.PathLike[str]] = (), hermes: Named = None,
           hermes_home: Named = None, database: str | None = None) -> ServeSettings:
        root = project_root(project)
        return cls(root, transport(hermes, hermes_home), ReadRoots.of(root, allowed),
                   settings.database_url(database))
