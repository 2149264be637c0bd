"""`mount` and `unmount` as plans: the config's text before and after, computed before any write.

Invariants:
- Planning never writes. A plan whose text equals the file's is "unchanged": applying it writes
  nothing and makes no backup, so mount and unmount are idempotent.
- The entry's paths are absolute and checked to exist when the plan is made: a plan never points
  Hermes at a body or fixture that is not there.
- What mount or unmount would write is first read back the way Hermes reads it
  (`harness.hermes.config_yaml`, YAML 1.1): mount's entry must come back as the spec with
  `enabled` absent or the boolean true. What the operator spelled in a way YAML 1.1 reads
  otherwise is restated once in plain YAML, with a note: an `enabled: off`, `no` or `"0"` (Hermes's
  agent skips the server) or `0` (its `mcp list` shows it disabled) becomes `enabled: true`, a
  `timeout: 0o74` (60 for ruamel, the string "0o74" for Hermes) becomes `timeout: 60`. Unmount's
  entry must be gone. Otherwise the plan is a HermesConfigError and nothing is written.
- `soul` is written as the body's own `--soul` option; SOUL.md itself is the body's business
  (harness.hermes_mount.soul asks it).
- `state` is decided by `settle_state`: as asked, else the entry's own (a file, a database or none),
  else for a new entry the home's default store, which without Level1 is none. Applying makes only a
  file store's folder: the store itself is the body's to make. A database (`--state postgresql://...`)
  is written only without a password, and its entry runs the body's dynamic build, the one with a
  PostgreSQL client (`harness.body.database_client`).
- `compact` is written as the body's `--text-block compact`: the model reads the output and a
  one-line summary per turn instead of the whole trace (docs/wire-contract.md says when to use it).
- `cognition` sampling is written as the body's `--cognition sampling`, and with it (asked, or the
  entry's own) the `sampling:` block is sized from the body's bounds and the full turns a minute the
  operator allows, and the entry's timeout made to outlast the body's turn deadline (`with_sampling`,
  harness.hermes_mount.cognition); stub takes back what mount wrote there.
- With `record`, the entry runs the recording relay (`python -m harness.replay.relay`) with this
  interpreter, and the relay runs the body: every Hermes session becomes a transcript. A record
  folder that does not exist (or cannot be written) is refused when the spec is built: the relay
  would fail at every start and Hermes would only say the tool does not exist.
- The plan's `spec` is settled against the entry already there (`entry.settle`): what mount does
  not own is kept. The check before writing runs the plan's entry as Hermes will read it
  (`planned_entry`: command, args and env, relay included).
- Mount and unmount change nothing Hermes reads outside the entry and mcp_discovery_timeout: the
  rest of the document is compared, as Hermes reads it, before and after, and a plan that would
  change it (an alias into the entry, say) is a HermesConfigError.
"""

from __future__ import annotations

import copy
import difflib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.body import database_client, default_organs, find_body
from harness.errors import BodyNotFound, ConfigError
from harness.hermes.config_yaml import CONFIG_NAME
from harness.hermes_mount.cognition import (
    COGNITION_OPTION,
    COGNITIONS,
    DEFAULT_TURNS_PER_MINUTE,
    SAMPLING,
    STUB,
    SamplingSpec,
    check_turns_per_minute,
    cognition_of,
    required_block,
    sampling_bounds,
    session_budget,
    tool_timeout_floor,
)
from harness.hermes_mount.config_file import (
    ConfigDocument,
    HermesConfigError,
    as_hermes,
    load_config,
    new_backup_path,
    render,
    write_config,
)
from harness.hermes_mount.entry import (
    DISCOVERY_KEY,
    SERVERS_KEY,
    STATE_OPTION,
    DatabaseState,
    EntrySpec,
    Store,
    apply_entry,
    body_argv,
    check_discovery_timeout,
    check_name,
    checked_database_state,
    discovery_timeout,
    entry_body,
    entry_command,
    find_entry,
    hermes_mismatches,
    kept_body_args,
    remove_entry,
    restate_entry,
    servers_as_hermes,
    set_discovery_timeout,
    settle,
    state_of,
    state_value,
)
from harness.hermes_mount.home import HermesHome
from harness.hermes_mount.level1 import (
    DISABLED_NOTE,
    FilesPlan,
    apply_files,
    disable,
    enable,
    hermes_view,
    plan_files,
    without_plugin,
)
from harness.hermes_mount.made import Made, absent, digest, leaves_it_all, read_made, record_mount, remove_what_is_left
from harness.hermes_mount.probe import hermes_child_env
from harness.hermes_mount.soul import SOUL_OPTION, SOUL_POLICIES
from harness.replay.recorder import RELAY_MODULE, unwritable_reason

COMPACT_TEXT_BLOCK = ("--text-block", "compact")
STATE_OFF = "off"
# Where the body keeps its sessions by default: under the home, beside Hermes's own state.db, so the CLI and a
# gateway on one home share them, and two homes (two profiles) never do.
STATE_FOLDER = "mafiabot"
STATE_FILE = "sessions.db"


# What a body without --state does with its sessions.
IN_MEMORY = "each body's memory"
NO_LEVEL1_STATE_NOTE = (f"no {STATE_OPTION}: without Level1 the model chooses the key, and the home's store is shared "
                        f"by every body of the home across restarts; sessions stay in {IN_MEMORY}: pass "
                        f"{STATE_OPTION} FILE to keep them anyway")


def default_state(home: HermesHome) -> Path:
    return home.path / STATE_FOLDER / STATE_FILE


@dataclass
class HomeChange:
    """What `mount` or `unmount` would change in one Hermes home, computed before anything is written (`--dry-run`
    prints it). Not auto-pilot's `Plan`, which is a host agent's plan of sub-tasks; this one is a change to a config."""

    home: HermesHome
    doc: ConfigDocument
    new_text: str
    notes: list[str] = field(default_factory=list)
    spec: EntrySpec | None = None  # mount's entry, settled against the one already there
    plugin: FilesPlan | None = None  # the Level1 plugin's folder (harness.hermes_mount.level1)
    state: Store | None = None  # the body's --state: a file, whose folder mount makes when it writes, or a database
    warnings: list[str] = field(default_factory=list)  # what the operator asked for that weakens a guarantee
    made: Made | None = None  # unmount: what mount recorded making in the home (harness.hermes_mount.made)
    remove_config: bool = False  # unmount: config.yaml is mount's and nothing is left in it
    dropped_discovery: bool = False  # unmount: the mcp_discovery_timeout mount added is taken back

    @property
    def config_changed(self) -> bool:
        return self.new_text != (self.doc.original or "")

    @property
    def changed(self) -> bool:
        return self.config_changed or (self.plugin is not None and self.plugin.changed)

    def diff(self) -> str:
        old = (self.doc.original or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        label = str(self.home.config)
        return "".join(difflib.unified_diff(old, new, f"{label} (now)", f"{label} (after)"))


@dataclass(frozen=True)
class MountedBody:
    argv: list[str]  # the body's own command line (the relay's body when the entry records)
    env: dict[str, str]  # the environment Hermes gives it


def build_spec(home: HermesHome, name: str, body: str | None, organs: str | None,
               timeout: int | None = None, connect_timeout: int | None = None,
               record: str | None = None, soul: str | None = None,
               body_args: tuple[str, ...] | None = None, compact: bool = False,
               state: str | None = None, cognition: str | None = None,
               turns_per_minute: int | None = None) -> EntrySpec:
    """The entry to write; BodyNotFound / ConfigError when the body, fixture or record folder is missing.

    `soul` (keep, replace or off) becomes the body's `--soul`; None leaves the entry's own choice
    (the body's default, keep, for a new entry). None for a timeout or `body_args` keeps the
    entry's own (see `entry.settle`). `state` is the body's `--state` file, "off" for none (sessions
    then live as long as one body), None to leave it to `settle_state` (the entry's own choice, or
    the default for a new entry).
    `cognition` sampling becomes the body's `--cognition sampling`; stub writes none (the body's default)
    and takes the option out; None keeps the entry's. `turns_per_minute` sizes a sampled entry's max_rpm
    (harness.hermes_mount.cognition); None: its default.
    """
    check_name(name)
    if any(value is not None and value <= 0 for value in (timeout, connect_timeout)):
        raise ConfigError("--timeout and --connect-timeout must be positive numbers of seconds")
    if soul is not None and soul not in SOUL_POLICIES:
        raise ConfigError(f"--soul {soul}: use one of {', '.join(SOUL_POLICIES)}")
    if cognition is not None and cognition not in COGNITIONS:
        raise ConfigError(f"--cognition {cognition}: use one of {', '.join(COGNITIONS)}")
    if turns_per_minute is not None:
        check_turns_per_minute(turns_per_minute)
    for number, arg in enumerate(body_args or (), start=1):
        if "\x00" in arg:  # exec takes C strings: the entry would be written, and never start
            raise ConfigError(f"--body-arg number {number} holds a NUL byte, which no program's argument can; "
                              f"nothing was written")
    executable = find_body(body).absolute()
    fixture = Path(organs).absolute() if organs else default_organs()
    if fixture is not None and not fixture.is_file():
        raise ConfigError(f"the organ fixture {fixture} does not exist")
    own_args: tuple[str, ...] = ("--organs", str(fixture)) if fixture is not None else ()
    state_at = len(own_args)  # settle_state writes --state here, where mount always has
    if state == "":
        raise ConfigError(f"{STATE_OPTION} needs a file name, or {STATE_OFF}")
    if state is not None and "\x00" in state:
        raise ConfigError(f"{STATE_OPTION} holds a NUL byte, which no file name can; nothing was written")
    if state is not None and state != STATE_OFF:
        asked = state_value(state)
        state = str(checked_database_state(state) if isinstance(asked, DatabaseState) else Path(state).absolute())
    if soul is not None:
        own_args += (SOUL_OPTION, soul)
    if compact:
        own_args += COMPACT_TEXT_BLOCK
    if cognition == SAMPLING:
        own_args += (COGNITION_OPTION, SAMPLING)
    if record is None:
        return EntrySpec(name, executable, own_args, home.path, timeout, connect_timeout, body_args, cognition,
                         turns_per_minute=turns_per_minute, state=state, state_at=state_at)
    transcript = Path(record).absolute()
    if (reason := unwritable_reason(transcript)) is not None:
        raise ConfigError(f"--record {record}: {reason}; the relay could not record, so Hermes would never see "
                          f"the tool (create the folder first: mkdir -p {transcript.parent}); nothing was written")
    relay_args = ("-m", RELAY_MODULE, "--out", str(transcript), "--title",
                  f"Recorded: a Hermes session with '{name}'", "--for-body", "ada", "--", str(executable), *own_args)
    return EntrySpec(name, Path(sys.executable), relay_args, home.path, timeout, connect_timeout, body_args, cognition,
                     turns_per_minute=turns_per_minute, state=state,
                     state_at=len(relay_args) - len(own_args) + state_at)  # the body's own args end the relay's


def plan_mount(home: HermesHome, spec: EntrySpec, discovery: float | None, level1: bool = True) -> HomeChange:
    """Mount's plan; `level1` installs and enables the Level1 plugin for the entry, False takes it away."""
    if discovery is not None:
        check_discovery_timeout(discovery)
    doc = load_config(home.config)
    plugin = plan_files(home, spec.name, install=level1)
    entry = find_entry(doc.data, spec.name)
    kept = kept_body_args(spec, entry) if spec.extra_args is None else ()
    asked_timeout = spec.timeout
    # A plugin the operator's deny list names never loads: the model chooses the key as without Level1
    denied = doc.original is not None and hermes_view(as_hermes(doc.original, doc.path)).disabled
    spec, state_notes, warnings = settle_state(home, spec, entry, level1 and not denied)
    spec = settle(spec, entry)
    spec, notes = with_sampling(spec, asked_timeout)
    notes = state_notes + notes + apply_entry(doc.data, spec)
    if kept:
        notes.insert(0, f"kept the entry's own body arguments: {' '.join(kept)} (--body-arg replaces them)")
    if discovery is not None:
        set_discovery_timeout(doc.data, discovery)
    discovery_timeout(doc.data)  # a malformed value is reported before anything is written
    if level1:
        enable(doc.data)
    elif plugin.retires:
        disable(doc.data)  # the last server it acted for no longer wants it
    if not doc.exact:
        notes.append("ruamel.yaml could not reproduce every line of the file exactly; "
                     "review the change with --dry-run (a backup is kept either way)")
    text = as_hermes_reads_it(doc, spec, discovery, notes)
    _check_nothing_else_changes(doc, text, spec.name)
    view = hermes_view(as_hermes(text, doc.path))
    if level1 and not view.enabled:
        raise HermesConfigError(f"{doc.path}: after the change Hermes would not read plugins.enabled as naming the "
                                "Level1 plugin; the file was left untouched")
    if level1 and view.disabled:
        notes.append(DISABLED_NOTE)
    return HomeChange(home, doc, text, notes + plugin.notes, spec, plugin, state_of(body_argv(str(spec.command), spec.args)),
                warnings)


def settle_state(home: HermesHome, spec: EntrySpec, entry: Mapping[str, Any] | None,
                 level1: bool) -> tuple[EntrySpec, list[str], list[str]]:
    """The spec with its --state decided and written at `spec.state_at`, with notes and warnings.

    Asked, it is written as asked (`off`: none). Not asked, a remount keeps the entry's own choice, a
    file or none, and a new entry gets the home's default store; except without Level1, where the key
    is whatever the model writes, so the default store, shared by every body of the home across
    restarts, would let it reach any session: it is not written (with a note), and a file the operator
    named (asked now, or kept) is, with a warning. A remount that changes the store says so and leaves
    the old one as it is.
    """
    body = entry_body(spec, entry)
    before = state_of(body) if body is not None else None
    default = default_state(home)
    chosen: Store | None
    if spec.state == STATE_OFF:
        chosen = None
    elif spec.state is not None:
        chosen = state_value(spec.state)
    else:
        chosen = before if body is not None else default
    notes: list[str] = []
    warnings: list[str] = []
    if not level1 and spec.state is None and chosen == default:
        chosen = None
        notes.append(NO_LEVEL1_STATE_NOTE)
    elif not level1 and chosen is not None:
        warnings.append(f"{STATE_OPTION} {chosen} without Level1: the model chooses each turn's uid, channel and server, "
                        "so it can reach any session kept there")
    if body is not None and chosen != before:
        notes.append(_store_moved(before, chosen))
    args = list(spec.args)
    if chosen is not None:
        args[spec.state_at:spec.state_at] = [STATE_OPTION, str(chosen)]
    spec = replace(spec, args=tuple(args))
    if isinstance(chosen, DatabaseState):
        spec, switched = _with_a_database_client(spec)
        notes += switched
    return spec, notes, warnings


def _with_a_database_client(spec: EntrySpec) -> tuple[EntrySpec, list[str]]:
    """The spec running a body that can open a database: only the dynamic build links libpq (docs/scale-out.md),
    so the static body is replaced by the dynamic one beside it, with a note; BodyNotFound when that is missing."""
    argv = [str(spec.command), *spec.args]
    at = len(argv) - len(body_argv(str(spec.command), spec.args))  # where the body is: 0, or after the relay's --
    named = Path(argv[at])
    try:
        client = database_client(named)
    except BodyNotFound as exc:
        raise BodyNotFound(f"--state {state_of(argv[at:])}: {exc}") from None
    if client == named:
        return spec, []
    argv[at] = str(client)
    note = f"the database needs the body's PostgreSQL client: the entry runs {client} (the static {named} has none)"
    return replace(spec, command=Path(argv[0]), args=tuple(argv[1:])), [note]


def _store_moved(before: Store | None, after: Store | None) -> str:
    def where(store: Store | None) -> str:
        return str(store) if store is not None else IN_MEMORY

    left = f"; {before} is left as it is" if before is not None else ""
    return f"sessions were kept in {where(before)}, now in {where(after)}{left}"


def with_sampling(spec: EntrySpec, asked_timeout: float | None) -> tuple[EntrySpec, list[str]]:
    """The settled spec with what its cognition asks of the `sampling:` block and the tool timeout, and notes.

    Sampling cognition (asked, or the entry's own) sizes the block from the body's bounds and makes the
    entry's timeout outlast the turn deadline: a kept or default timeout that does not is raised with a
    note, a `--timeout` that does not is refused (the operator asked for both). `--cognition stub` takes
    back what mount wrote. ConfigError when the body cannot say its bounds.
    """
    body = body_argv(str(spec.command), spec.args)
    turns = DEFAULT_TURNS_PER_MINUTE if spec.turns_per_minute is None else spec.turns_per_minute
    if cognition_of(body) == SAMPLING:
        bounds = sampling_bounds(body)
        budget = session_budget(body)
        sampling = SamplingSpec(required_block(bounds, turns, budget), True, bounds, spec.turns_per_minute is not None,
                                budget)
        floor = tool_timeout_floor(bounds)
        assert spec.timeout is not None  # settled
        if spec.timeout >= floor:
            return replace(spec, sampling=sampling), []
        if asked_timeout is not None:
            raise ConfigError(f"--timeout {asked_timeout:g}: with --cognition sampling Hermes must wait longer than "
                              f"the body's turn deadline ({bounds.turn_deadline_ms} ms): give at least {floor}; "
                              "nothing was written")
        note = (f"raised the entry's timeout from {spec.timeout:g} to {floor} s: Hermes must wait longer than the "
                f"body's turn deadline ({bounds.turn_deadline_ms} ms)")
        return replace(spec, sampling=sampling, timeout=floor), [note]
    if spec.cognition == STUB:
        try:
            bounds = sampling_bounds(body)
        except ConfigError:
            return spec, []  # a body without sampling wrote no block to take back
        return replace(spec, sampling=SamplingSpec(required_block(bounds, turns), False, bounds)), []
    return spec, []


def as_hermes_reads_it(doc: ConfigDocument, spec: EntrySpec, discovery: float | None, notes: list[str]) -> str:
    """The text to write, once Hermes's own reading of it holds the entry as meant (see the invariants)."""
    text = render(doc)
    misread = hermes_mismatches(_servers_as_hermes(text, doc).get(spec.name), spec)
    if misread:
        # The operator's spelling survived (ruamel keeps `off`, `0o74`...), but YAML 1.1 reads it otherwise.
        restate_entry(doc.data, spec)
        notes.append(f"Hermes would have read the entry's {'; '.join(misread)}: "
                     "rewritten in plain YAML, which YAML 1.1 and 1.2 read alike")
        text = render(doc)
    problems = hermes_mismatches(_servers_as_hermes(text, doc).get(spec.name), spec)
    if discovery is not None and (read := as_hermes(text, doc.path).get(DISCOVERY_KEY)) != discovery:
        problems.append(f"{DISCOVERY_KEY}: {read!r}")
    if problems:
        raise HermesConfigError(f"{doc.path}: after the change Hermes would read {'; '.join(problems)} "
                                f"for mcp_servers.{spec.name}; the file was left untouched")
    return text


def _servers_as_hermes(text: str, doc: ConfigDocument) -> dict[str, Any]:
    return servers_as_hermes(as_hermes(text, doc.path))


def _outside(document: dict[str, Any], name: str) -> dict[str, Any]:
    """What Hermes reads outside mount's business: all but the entry, mcp_discovery_timeout and the Level1 plugin's
    item in plugins.enabled."""
    rest = without_plugin(copy.deepcopy(document))
    rest.pop(DISCOVERY_KEY, None)
    servers = rest.get(SERVERS_KEY)
    if isinstance(servers, dict):
        servers.pop(name, None)
    if SERVERS_KEY in rest and not servers:
        del rest[SERVERS_KEY]  # no key, `mcp_servers:` and `mcp_servers: {}` all read as no servers
    return rest


def _check_nothing_else_changes(doc: ConfigDocument, text: str, name: str) -> None:
    before = _outside(as_hermes(doc.original or "", doc.path), name)
    after = _outside(as_hermes(text, doc.path), name)
    if before != after:
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        raise HermesConfigError(f"{doc.path}: the change would also alter {', '.join(map(str, changed))} as Hermes "
                                f"reads it (an alias into mcp_servers.{name}?); the file was left untouched")


def planned_entry(plan: HomeChange) -> tuple[str, list[str], dict[str, str]]:
    """What Hermes will run for the plan's entry once written: its command, args and env, as Hermes reads them."""
    assert plan.spec is not None
    entry = _servers_as_hermes(plan.new_text, plan.doc).get(plan.spec.name)
    return entry_command(entry if isinstance(entry, dict) else {})


def planned_body(plan: HomeChange) -> MountedBody:
    """The body the plan's entry will run, as Hermes will run it."""
    command, args, env = planned_entry(plan)
    return MountedBody(body_argv(command, args), hermes_child_env(env))


def mounted_body(home: HermesHome, name: str) -> MountedBody | None:
    """The body the home's entry `name` runs, as Hermes runs it; None when nothing is mounted."""
    entry = find_entry(load_config(home.config).data, name)
    if entry is None:
        return None
    command, args, env = entry_command(entry)
    return MountedBody(body_argv(command, args), hermes_child_env(env))


def plan_unmount(home: HermesHome, name: str) -> tuple[HomeChange, bool]:
    """The plan, and whether there was an entry to remove (the Level1 plugin goes with the last entry it serves)."""
    doc = load_config(home.config)
    if doc.original is None:
        return HomeChange(home, doc, ""), False
    plugin = plan_files(home, name, install=False)
    removed = remove_entry(doc.data, name)
    if plugin.retires:
        disable(doc.data)
    if not removed:
        return HomeChange(home, doc, doc.original, plugin=plugin), False
    made = read_made(home)
    last = leaves_it_all(made, name)
    dropped = last and made.discovery is not None and doc.data.get(DISCOVERY_KEY) == made.discovery
    if dropped:
        del doc.data[DISCOVERY_KEY]
    text = render(doc)
    if name in _servers_as_hermes(text, doc):
        raise HermesConfigError(f"{doc.path}: after removing mcp_servers.{name} Hermes would still read it "
                                "(a duplicate key?); the file was left untouched")
    _check_nothing_else_changes(doc, text, name)
    notes = [*plugin.notes, *([made.note] if made.note else [])]
    return HomeChange(home, doc, text, notes, plugin=plugin, made=made, dropped_discovery=dropped,
                remove_config=last and CONFIG_NAME in made.paths and not text.strip()), True


def _make_state_folder(state: Path) -> None:
    """The folder of the body's --state file: the body refuses to start (exit 2) where it cannot create the file."""
    try:
        state.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HermesConfigError(f"--state {state}: its folder {state.parent} cannot be made ({exc.strerror or exc}); "
                                f"the body could not start, so nothing was written") from None
    if not os.access(state.parent, os.W_OK | os.X_OK):
        raise HermesConfigError(f"--state {state}: its folder {state.parent} is not writable, so the body could not "
                                f"start; nothing was written")


def apply_plan(plan: HomeChange) -> Path | None:
    """Write the plan if it changes anything; returns the config's backup (None: no backup made).

    The plugin's files are written before config.yaml names the plugin, and removed after it no
    longer does: a Hermes starting meanwhile never enables a plugin that is not there.
    """
    installing = plan.plugin is not None and bool(plan.plugin.writes)
    if isinstance(plan.state, Path):  # also when nothing else changes: a folder removed since is made again
        _make_state_folder(plan.state)
    if installing and plan.plugin is not None:
        apply_files(plan.plugin)
    if plan.remove_config:
        backup = _remove_config(plan)
    else:
        backup = write_config(plan.doc, plan.new_text) if plan.config_changed else None
    if not installing and plan.plugin is not None and plan.plugin.changed:
        apply_files(plan.plugin)
    return backup


def mount_paths(plan: HomeChange) -> list[Path]:
    """What applying mount's plan may create in the home, parents first (harness.hermes_mount.made records those
    that do not exist yet)."""
    home = plan.home.path
    candidates = [home, plan.home.config]
    if plan.plugin is not None and plan.plugin.writes:
        candidates += [plan.plugin.folder.parent, plan.plugin.folder]
    if isinstance(plan.state, Path) and plan.state.parent.is_relative_to(home):
        parts = plan.state.parent.relative_to(home).parts
        candidates += [home.joinpath(*parts[:n]) for n in range(1, len(parts) + 1)]
    return candidates


def apply_mount(plan: HomeChange, name: str) -> Path | None:
    """Apply mount's plan and record what it made that was not there (the home, config.yaml, folders)."""
    created = absent(plan.home, mount_paths(plan))
    before = read_made(plan.home)
    had = as_hermes(plan.doc.original, plan.doc.path).get(DISCOVERY_KEY) if plan.doc.original is not None else None
    backup = apply_plan(plan)
    # The value is mount's when the key was absent, or still held what mount wrote before.
    mounts = had is None or (before.discovery is not None and had == before.discovery)
    added = as_hermes(plan.new_text, plan.doc.path).get(DISCOVERY_KEY) if mounts else None
    record_mount(plan.home, before, created, name, added, plan.new_text if plan.config_changed else None)
    return backup


def finish_unmount(plan: HomeChange, name: str) -> list[str]:
    """After unmount's writes: what mount made and is now empty goes (harness.hermes_mount.made)."""
    if plan.made is None:
        return []
    return remove_what_is_left(plan.home, plan.made, name,
                               plan.new_text if plan.config_changed and not plan.remove_config else None)


def _remove_config(plan: HomeChange) -> Path | None:
    """Remove the config.yaml that mount created and unmount emptied; kept as a backup first when it changed
    since mount last wrote it (the operator's, then)."""
    config = plan.home.config
    backup = None
    original = plan.doc.original or ""
    if plan.made is None or digest(original) != plan.made.config_sha256:
        backup = new_backup_path(config)
        try:
            backup.write_text(original, encoding="utf-8")
        except OSError as exc:
            raise HermesConfigError(f"cannot back up {config} as {backup.name}: {exc.strerror or exc}; "
                                    "the file was left as it was") from None
    try:
        config.unlink()
    except OSError as exc:
        raise HermesConfigError(f"cannot remove {config}: {exc.strerror or exc}") from None
    return backup
