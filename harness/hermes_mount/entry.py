"""The body's entry under `mcp_servers` in Hermes's config: what it holds, and how it is applied.

The entry Hermes needs (tools/mcp_tool.py reads these keys):
    mcp_servers:
      mafiabot:
        command: /absolute/path/to/mafiabot_core/bin/mafiabot
        args: [--organs, /absolute/path/to/stubs/organs/default.json]
        env: {HERMES_HOME: /absolute/path/to/the/home}
        timeout: 60
        connect_timeout: 30
        sampling: {max_rpm: ..., timeout: ..., max_tokens_cap: ...}   # with --cognition sampling only

Invariants:
- Paths are absolute: Hermes starts the body from whatever directory Hermes runs in.
- `env` always carries HERMES_HOME: Hermes filters the child's environment down to PATH, HOME,
  USER, LANG, ... plus the entry's `env:`, so without it the body would write SOUL.md into
  ~/.hermes whatever home Hermes uses.
- Applying updates an existing entry in place: keys the operator added (`tools`, other `env`
  variables, anything else) and their comments stay; the keys above are set. Applying the same
  spec twice leaves the document unchanged.
- Mount owns the command, the relay's own arguments and the body options it writes (`--organs`,
  and `--soul` when asked): `settle` keeps every other body argument of the entry (a
  `--max-sessions 50` survives a remount) unless `--body-arg`s are given, and keeps the entry's
  `timeout` and `connect_timeout` unless new ones are given.
- `--state` is always mount's to write, and like `--soul` a remount that does not ask keeps the
  entry's own choice, a file, a database or none (harness.hermes_mount.mount.settle_state);
  `split_state` is the one reading of which arguments are a `--state`, and `state_value` of what one
  names. Any build of the body (`ADA_BODY`) is the body whose arguments a remount keeps.
- `--cognition` is mount's when asked (`spec.cognition`), else the entry's own body argument. The
  `sampling:` block is mount's to size only with sampling cognition, and to take back only what it
  wrote (harness.hermes_mount.cognition); the rest of the block is the operator's.
- Keys that would make Hermes ignore `command` (`url`, and `headers`, which only a URL uses) are
  removed, with a note: Hermes connects to a URL in preference to running a command.
- An entry that shares a node with another part of the file (a YAML anchor `&m` with an alias
  `*m` elsewhere) is detached first: the entry becomes its own copy, so changing it never changes
  the server or setting that aliases it.
- `enabled` is not judged here, on ruamel's YAML 1.2 reading
  (where `off` is a string): mount judges it on Hermes's reading (`mount.as_hermes_reads_it`),
  which `restate_entry`s the owned keys as plain values when Hermes would misread them.
- `hermes_mismatches(entry, spec)` compares an entry *as Hermes read it* with the spec.
- Structures that are not mappings where mappings belong raise HermesConfigError naming the key
  and its line; nothing is guessed.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from harness.database import holds_password, shown_url
from harness.errors import ConfigError
from harness.hermes_mount.cognition import (
    COGNITION_OPTION,
    SAMPLING_KEY,
    SamplingSpec,
    apply_sampling,
    restate_sampling,
    shortfalls,
)
from harness.hermes_mount.config_file import HermesConfigError, child_mapping, line_of
from harness.replay.recorder import RELAY_MODULE
from harness.settings import DATABASE_SCHEMES

SERVERS_KEY = "mcp_servers"
DISCOVERY_KEY = "mcp_discovery_timeout"
# Hermes's default (hermes_cli/config.py): how long a session waits for MCP servers before its
# first tool snapshot; Hermes itself uses the default for a value that is not above 0.
HERMES_DEFAULT_DISCOVERY = 1.5
# What mount writes: below a second a body on a loaded machine misses it for nothing; ten
# minutes is already a session that waits forever for a dead server.
DISCOVERY_RANGE = (1.0, 600.0)
DEFAULT_NAME = "mafiabot"
# A turn takes milliseconds; 60 s per call leaves room for real organs later (Hermes default 300).
DEFAULT_TIMEOUT = 60
# The body starts in ~1 ms; 30 s is Hermes's `mcp test` default and generous for a cold disk.
DEFAULT_CONNECT_TIMEOUT = 30
# Hermes (tools/mcp_tool.py) treats an entry with a `url` as an HTTP server and never runs its
# command; `headers` only go with a URL.
COMMAND_OVERRIDING_KEYS = ("url", "headers")
SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TOOL = "turn"
# The body's session store: mount decides it whether or not it was asked (harness.hermes_mount.mount.settle_state
# keeps the entry's own choice when it was not), so `kept_body_args` never keeps it.
STATE_OPTION = "--state"
# The body's builds: the static default, the dynamic one (the only one with a PostgreSQL client), either unchecked.
ADA_BODY = re.compile(r"^mafiabot(-dynamic)?(-unchecked)?$")
ALWAYS_OWNED = frozenset({STATE_OPTION})
_YAML_1_1 = YAML(typ="safe")
_YAML_1_1.version = (1, 1)


@dataclass(frozen=True)
class EntrySpec:
    name: str
    command: Path
    args: tuple[str, ...]
    hermes_home: Path
    # None: keep the entry's own value (or the default for a new entry); see `settle`.
    timeout: float | None = DEFAULT_TIMEOUT
    connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT
    # The body's own arguments beyond the ones mount writes; None: keep the entry's.
    extra_args: tuple[str, ...] | None = ()
    # The --cognition asked for (harness.hermes_mount.cognition); None: keep the entry's.
    cognition: str | None = None
    # What to do with the entry's `sampling:` block; None: leave it as it is.
    sampling: SamplingSpec | None = None
    # --sampling-turns-per-minute as asked (harness.hermes_mount.cognition); None: its default.
    turns_per_minute: int | None = None
    # The --state asked for (an absolute file, or "off"); None: not asked. `args` holds none until
    # harness.hermes_mount.mount.settle_state decides it and puts it at `state_at`.
    state: str | None = None
    state_at: int = 0


def settle(spec: EntrySpec, entry: CommentedMap | None) -> EntrySpec:
    """The spec with everything it leaves to the entry taken from it: the entry mount will write."""
    extras = spec.extra_args if spec.extra_args is not None else kept_body_args(spec, entry)
    return replace(spec, args=(*spec.args, *extras), extra_args=(),
                   timeout=_kept_seconds(spec.timeout, entry, "timeout", DEFAULT_TIMEOUT),
                   connect_timeout=_kept_seconds(spec.connect_timeout, entry, "connect_timeout",
                                                 DEFAULT_CONNECT_TIMEOUT))


def is_ada_body(command: str) -> bool:
    """Whether `command` is one of the body's builds (static, dynamic, unchecked)."""
    return ADA_BODY.fullmatch(Path(command).name) is not None


def entry_body(spec: EntrySpec, entry: Mapping[str, Any] | None) -> list[str] | None:
    """The body command line of the entry already there, when it runs the spec's program (any build of the body
    is the body); None otherwise (no entry, or another program's, whose arguments are nothing of the body's to
    keep)."""
    if entry is None:
        return None
    command, args, _ = entry_command(entry)
    body, ours = body_argv(command, args), body_argv(str(spec.command), spec.args)
    same = Path(body[0]).name == Path(ours[0]).name or (is_ada_body(body[0]) and is_ada_body(ours[0]))
    return body if same else None


def kept_body_args(spec: EntrySpec, entry: CommentedMap | None) -> tuple[str, ...]:
    """The entry's body arguments that mount does not write, in their order; () when it ran another program."""
    body = entry_body(spec, entry)
    if body is None:
        return ()
    ours = body_argv(str(spec.command), spec.args)
    owned = {item.split("=", 1)[0] for item in ours[1:] if item.startswith("--")} | ALWAYS_OWNED
    if spec.cognition is not None:
        owned.add(COGNITION_OPTION)  # --cognition stub writes none: the body's default
    kept: list[str] = []
    items = iter(body[1:])
    for item in items:
        option, joined, _ = item.partition("=")
        if option in owned:
            if not joined:
                next(items, None)  # its value goes with it
            continue
        kept.append(item)
    return tuple(kept)


def _kept_seconds(asked: float | None, entry: CommentedMap | None, key: str, default: float) -> float:
    if asked is not None:
        return asked
    value = entry.get(key) if entry is not None else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return default
    # A plain number: ruamel's own (an OctalInt of `0o74`, say) would be written back as spelled.
    return int(value) if isinstance(value, int) else float(value)


def check_name(name: str) -> str:
    if not SERVER_NAME.fullmatch(name):
        raise HermesConfigError(f"server name {name!r}: use letters, digits, '_', '-' or '.', at most 64")
    return name


def tool_name(server: str) -> str:
    """The name the model sees, as Hermes 0.18.2+ spells it."""
    return f"mcp__{re.sub(r'[^A-Za-z0-9_]', '_', server)}__{TOOL}"


def servers_of(data: CommentedMap, create: bool) -> CommentedMap | None:
    return child_mapping(data, SERVERS_KEY, create, SERVERS_KEY, "a mapping of servers")


def find_entry(data: CommentedMap, name: str) -> CommentedMap | None:
    servers = servers_of(data, create=False)
    if servers is None or name not in servers:
        return None
    entry = servers[name]
    if not isinstance(entry, CommentedMap):
        raise HermesConfigError(f"'{SERVERS_KEY}.{name}'{line_of(servers, name)} is not a mapping; "
                                "fix it by hand, the file was left untouched")
    return entry


def is_relay(argv: Iterable[str]) -> bool:
    """Whether a command line runs the recording relay (`python -m harness.replay.relay ... -- BODY...`)."""
    items = list(argv)
    return RELAY_MODULE in items and "--" in items


def body_argv(command: str, args: Iterable[str]) -> list[str]:
    """The body's own command line in an entry: the relay's body when the entry records."""
    argv = [command, *args]
    if is_relay(argv):
        argv = argv[argv.index("--") + 1:]
    return argv


@dataclass(frozen=True)
class DatabaseState:
    """A `--state` naming a PostgreSQL database (the dynamic body's libpq reads the URL), not a file: nothing of it
    is on this machine's disk, and mount writes it only without a password (`checked_database_state`)."""

    url: str

    def __str__(self) -> str:
        return self.url


# Where a body keeps its sessions: a file (SQLite) or a database.
Store = Path | DatabaseState


def state_value(text: str) -> Store:
    """What a `--state` value names, as the body reads it: a PostgreSQL URL (harness.settings.DATABASE_SCHEMES,
    the schemes the body takes too), else a file."""
    return DatabaseState(text) if text.startswith(DATABASE_SCHEMES) else Path(text)


def checked_database_state(url: str) -> DatabaseState:
    """A database `--state` mount may write into config.yaml: ConfigError for one holding a password (the URL
    itself is never quoted), which belongs in the password file libpq reads."""
    if holds_password(url):
        raise ConfigError(f"{STATE_OPTION} {shown_url(url)}: the URL holds a password, which mount would write into "
                          "config.yaml: keep it in ~/.pgpass (or the file $PGPASSFILE names) or a service file "
                          "(PGSERVICEFILE, then postgresql:///?service=NAME), which the body's libpq reads; "
                          "nothing was written")
    return DatabaseState(url)


def split_state(argv: Iterable[str]) -> tuple[list[str], Store | None]:
    """A body's command line without its `--state` options, and the store they name: the last one, as the body
    reads them (None without one). The one reading of "what is a --state argument" (`--state FILE` or
    `--state=FILE`; a `--state` with no value after it names nothing)."""
    kept: list[str] = []
    store: Store | None = None
    items = iter(argv)
    for item in items:
        if item == STATE_OPTION:
            value = next(items, None)
            if value is not None:
                store = state_value(value)
        elif item.startswith(STATE_OPTION + "="):
            store = state_value(item.split("=", 1)[1])
        else:
            kept.append(item)
    return kept, store


def without_state(argv: Iterable[str]) -> list[str]:
    """A body's command line without its session store: for the tasks that answer about SOUL.md and hold no
    session (the body opens a --state store at every start, and its folder may not exist before mount writes)."""
    return split_state(argv)[0]


def state_of(argv: Iterable[str]) -> Store | None:
    """The --state store of a body's arguments (the last one, as the body reads them); None without one."""
    return split_state(argv)[1]


def entry_command(entry: Mapping[str, Any]) -> tuple[str, list[str], dict[str, str]]:
    """What Hermes runs for an entry: its command, args and env, as the strings Hermes passes."""
    return (str(entry.get("command", "")), [str(a) for a in (entry.get("args") or [])],
            {str(k): str(v) for k, v in (entry.get("env") or {}).items()})


def apply_entry(data: CommentedMap, spec: EntrySpec) -> list[str]:
    """Add or update the entry; returns notes for the operator about what was kept or changed."""
    notes: list[str] = []
    servers = servers_of(data, create=True)
    assert servers is not None
    entry = find_entry(data, spec.name)
    if entry is None:
        entry = CommentedMap()
        servers[spec.name] = entry
    elif _shared(data, entry):
        entry = servers[spec.name] = _unshared_copy(entry)
        notes.append(f"the entry shared a YAML anchor with another part of the file: mcp_servers.{spec.name} "
                     "is now its own copy, and what aliased it keeps what it had")
    overriding = [key for key in COMMAND_OVERRIDING_KEYS if key in entry]
    for key in overriding:
        del entry[key]
    if overriding:
        notes.append(f"removed the entry's {', '.join(overriding)}: Hermes connects to a url instead of "
                     "running the command")
    _set(entry, "command", str(spec.command))
    if list(entry.get("args") or []) != list(spec.args):
        entry["args"] = flow_args(spec.args)
    env = entry.get("env")
    if env is None:
        entry["env"] = _flow_map({"HERMES_HOME": str(spec.hermes_home)})
    elif not isinstance(env, CommentedMap):
        raise HermesConfigError(f"'{SERVERS_KEY}.{spec.name}.env'{line_of(entry, 'env')} is not a mapping; "
                                "fix it by hand, the file was left untouched")
    else:
        _set(env, "HERMES_HOME", str(spec.hermes_home))
        others = sorted(k for k in env if k != "HERMES_HOME")
        if others:
            notes.append(f"kept the entry's other env variables: {', '.join(others)}")
    _set(entry, "timeout", spec.timeout)
    _set(entry, "connect_timeout", spec.connect_timeout)
    if spec.sampling is not None:
        notes.extend(apply_sampling(entry, spec.name, spec.sampling))
    written: tuple[str, ...] = ("command", "args", "env", "timeout", "connect_timeout", "enabled")
    if spec.sampling is not None and spec.sampling.on:
        written += (SAMPLING_KEY,)
    kept = [k for k in entry if k not in written]
    if kept:
        notes.append(f"kept the entry's own settings: {', '.join(map(str, kept))}")
    return notes


def _containers(node: object) -> Iterator[CommentedBase]:
    if isinstance(node, CommentedMap):
        yield node
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, CommentedSeq):
        yield node
        for item in node:
            yield from _containers(item)


def _shared(data: CommentedMap, entry: CommentedMap) -> bool:
    """Whether a node of the entry is also reached from outside it (ruamel loads an alias as the same object)."""
    inside = {id(node) for node in _containers(entry)}
    seen: dict[int, int] = {}
    for node in _containers(data):
        seen[id(node)] = seen.get(id(node), 0) + 1
    return any(seen.get(key, 0) > 1 for key in inside)


def _unshared_copy(entry: CommentedMap) -> CommentedMap:
    """A copy of the entry, comments and styles kept, without the anchors the original carries."""
    fresh = copy.deepcopy(entry)
    for node in _containers(fresh):
        node.yaml_set_anchor(None)
    return fresh


def restate_entry(data: CommentedMap, spec: EntrySpec) -> None:
    """Assign every key mount owns as a plain value, whatever style the operator's spelling had."""
    entry = find_entry(data, spec.name)
    assert entry is not None
    entry["command"] = str(spec.command)
    entry["args"] = _flow_seq(spec.args)
    entry["timeout"] = spec.timeout
    entry["connect_timeout"] = spec.connect_timeout
    if "enabled" in entry:
        entry["enabled"] = True
    env = entry.get("env")
    if isinstance(env, CommentedMap):
        env["HERMES_HOME"] = str(spec.hermes_home)
    if spec.sampling is not None:
        restate_sampling(entry, spec.name, spec.sampling)


def hermes_mismatches(entry: Any, spec: EntrySpec) -> list[str]:
    """What Hermes would read differently from the spec, one phrase per key; [] when it reads the spec."""
    if not isinstance(entry, dict):
        return [f"mcp_servers.{spec.name} as {type(entry).__name__}"]
    wanted = {"command": str(spec.command), "args": list(spec.args), "timeout": spec.timeout,
              "connect_timeout": spec.connect_timeout}
    # Hermes's own defaults for keys an entry may leave out (tools/mcp_tool.py).
    absent: dict[str, Any] = {"args": []}
    problems = [f"{key}: {entry.get(key)!r}" for key, value in wanted.items()
                if entry.get(key, absent.get(key)) != value]
    env = entry.get("env")
    if not isinstance(env, dict) or env.get("HERMES_HOME") != str(spec.hermes_home):
        problems.append(f"env: {env!r}")
    if entry.get("enabled", True) is not True:
        problems.append(f"enabled: {entry.get('enabled')!r}")
    if spec.sampling is not None and spec.sampling.on:
        problems.extend(shortfalls(entry.get(SAMPLING_KEY), spec.sampling.block))
    return problems


def servers_as_hermes(document: dict[str, Any]) -> dict[str, Any]:
    """The `mcp_servers` mapping of a document as Hermes read it; {} when it has none (Hermes's own reading)."""
    servers = document.get(SERVERS_KEY)
    return servers if isinstance(servers, dict) else {}


def remove_entry(data: CommentedMap, name: str) -> bool:
    servers = servers_of(data, create=False)
    if servers is None or name not in servers:
        return False
    del servers[name]
    if not servers and not servers.ca.comment and not servers.ca.items:
        # An `mcp_servers: {}` left behind would be something the operator's file never said.
        del data[SERVERS_KEY]
    return True


def discovery_timeout(data: Mapping[str, Any]) -> tuple[float, bool]:
    """Hermes's mcp_discovery_timeout in seconds, and whether the file sets it (`data` as ruamel or Hermes read it)."""
    value = data.get(DISCOVERY_KEY)
    if value is None:
        return HERMES_DEFAULT_DISCOVERY, False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HermesConfigError(f"'{DISCOVERY_KEY}'{line_of(data, DISCOVERY_KEY)} is not a number of seconds")
    if not value > 0:
        return HERMES_DEFAULT_DISCOVERY, False  # hermes_cli/mcp_startup.py: `val if val > 0 else default`
    return float(value), True


def check_discovery_timeout(seconds: float) -> float:
    """`seconds` when mount may write it as mcp_discovery_timeout; ConfigError otherwise."""
    low, high = DISCOVERY_RANGE
    if not low <= seconds <= high:
        raise ConfigError(f"--discovery-timeout {seconds:g}: give {low:g} to {high:g} seconds (Hermes's default is "
                          f"{HERMES_DEFAULT_DISCOVERY:g}; below {low:g} s a body on a busy machine misses it)")
    return seconds


def set_discovery_timeout(data: CommentedMap, seconds: float) -> None:
    _set(data, DISCOVERY_KEY, int(seconds) if float(seconds).is_integer() else float(seconds))


def _set(mapping: CommentedMap, key: str, value: Any) -> None:
    # Assigning an equal value would still drop the operator's quoting style.
    current = mapping.get(key)
    if current != value or not isinstance(current, type(value)):
        mapping[key] = value


def flow_args(items: Iterable[str]) -> CommentedSeq:
    """`args` as a flow sequence whose every item Hermes reads back as that same string.

    Hermes reads config.yaml with a YAML 1.1 reader (PyYAML), where a plain `off`, `yes` or `50`
    is a boolean or a number, and one non-string in `args` fails the connection (its
    StdioServerParameters wants strings); ruamel.yaml writes YAML 1.2, where they are plain
    strings. So an item that YAML 1.1 would read as anything else is written double-quoted.
    """
    return _flow_seq(item if _reads_back_in_yaml_1_1(item) else DoubleQuotedScalarString(item) for item in items)


def _reads_back_in_yaml_1_1(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns about YAML 1.1 floats such as 1e3
        try:
            return bool(_YAML_1_1.load(text) == text)
        except (YAMLError, RecursionError):  # nested past the parser's stack: a structure, so not a plain string
            return False


def _flow_seq(items: Any) -> CommentedSeq:
    seq = CommentedSeq(list(items))
    seq.fa.set_flow_style()
    return seq


def _flow_map(items: dict[str, Any]) -> CommentedMap:
    mapping = CommentedMap(items)
    mapping.fa.set_flow_style()
    return mapping
