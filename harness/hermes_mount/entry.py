"""The body's entry under `mcp_servers` in Hermes's config: what it holds, and how it is applied.

The entry Hermes needs (tools/mcp_tool.py reads these keys):
    mcp_servers:
      mafiabot:
        command: /absolute/path/to/mafiabot_core/bin/mafiabot
        args: [--organs, /absolute/path/to/stubs/organs/default.json]
        env: {HERMES_HOME: /absolute/path/to/the/home}
        timeout: 60
        connect_timeout: 30

Invariants:
- Paths are absolute: Hermes starts the body from whatever directory Hermes runs in.
- `env` always carries HERMES_HOME: Hermes filters the child's environment down to PATH, HOME,
  USER, LANG, ... plus the entry's `env:`, so without it the body would write SOUL.md into
  ~/.hermes whatever home Hermes uses.
- Applying updates an existing entry in place: keys the operator added (`tools`, other `env`
  variables) and their comments stay; the keys above are set. Applying the same spec twice
  leaves the document unchanged. `enabled` is not judged here, on ruamel's YAML 1.2 reading
  (where `off` is a string): mount judges it on Hermes's reading (`mount.as_hermes_reads_it`),
  which `restate_entry`s the owned keys as plain values when Hermes would misread them.
- `hermes_mismatches(entry, spec)` compares an entry *as Hermes read it* with the spec.
- Structures that are not mappings where mappings belong raise HermesConfigError naming the key
  and its line; nothing is guessed.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from harness.hermes_mount.config_file import HermesConfigError, line_of

SERVERS_KEY = "mcp_servers"
DISCOVERY_KEY = "mcp_discovery_timeout"
# Hermes's default (tools/mcp_tool.py): a server slower than this to start is silently dropped.
HERMES_DEFAULT_DISCOVERY = 1.5
DEFAULT_NAME = "mafiabot"
# A turn takes milliseconds; 60 s per call leaves room for real organs later (Hermes default 300).
DEFAULT_TIMEOUT = 60
# The body starts in ~1 ms; 30 s is Hermes's `mcp test` default and generous for a cold disk.
DEFAULT_CONNECT_TIMEOUT = 30
SERVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TOOL = "turn"
_YAML_1_1 = YAML(typ="safe")
_YAML_1_1.version = (1, 1)


@dataclass(frozen=True)
class EntrySpec:
    name: str
    command: Path
    args: tuple[str, ...]
    hermes_home: Path
    timeout: int = DEFAULT_TIMEOUT
    connect_timeout: int = DEFAULT_CONNECT_TIMEOUT


def check_name(name: str) -> str:
    if not SERVER_NAME.match(name):
        raise HermesConfigError(f"server name {name!r}: use letters, digits, '_', '-' or '.', at most 64")
    return name


def tool_name(server: str) -> str:
    """The name the model sees, as Hermes 0.18.2+ spells it."""
    return f"mcp__{re.sub(r'[^A-Za-z0-9_]', '_', server)}__{TOOL}"


def servers_of(data: CommentedMap, create: bool) -> CommentedMap | None:
    servers = data.get(SERVERS_KEY)
    if servers is None:
        if not create:
            return None
        servers = CommentedMap()
        data[SERVERS_KEY] = servers
    if not isinstance(servers, CommentedMap):
        raise HermesConfigError(f"'{SERVERS_KEY}'{line_of(data, SERVERS_KEY)} is not a mapping of servers "
                                f"but a {type(servers).__name__}; fix it by hand, the file was left untouched")
    return servers


def find_entry(data: CommentedMap, name: str) -> CommentedMap | None:
    servers = servers_of(data, create=False)
    if servers is None or name not in servers:
        return None
    entry = servers[name]
    if not isinstance(entry, CommentedMap):
        raise HermesConfigError(f"'{SERVERS_KEY}.{name}'{line_of(servers, name)} is not a mapping; "
                                "fix it by hand, the file was left untouched")
    return entry


def entry_command(entry: CommentedMap) -> tuple[str, list[str], dict[str, str]]:
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
    kept = [k for k in entry if k not in ("command", "args", "env", "timeout", "connect_timeout", "enabled")]
    if kept:
        notes.append(f"kept the entry's own settings: {', '.join(map(str, kept))}")
    return notes


def restate_entry(data: CommentedMap, spec: EntrySpec) -> None:
    """Assign every key mount owns as a plain value, whatever style the operator's spelling had."""
    entry = find_entry(data, spec.name)
    assert entry is not None
    entry["command"] = str(spec.command)
    entry["args"] = _flow_seq(spec.args)
    entry["timeout"] = int(spec.timeout)
    entry["connect_timeout"] = int(spec.connect_timeout)
    if "enabled" in entry:
        entry["enabled"] = True
    env = entry.get("env")
    if isinstance(env, CommentedMap):
        env["HERMES_HOME"] = str(spec.hermes_home)


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
    return True


def discovery_timeout(data: Mapping[str, Any]) -> tuple[float, bool]:
    """Hermes's mcp_discovery_timeout in seconds, and whether the file sets it (`data` as ruamel or Hermes read it)."""
    value = data.get(DISCOVERY_KEY)
    if value is None:
        return HERMES_DEFAULT_DISCOVERY, False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HermesConfigError(f"'{DISCOVERY_KEY}'{line_of(data, DISCOVERY_KEY)} is not a number of seconds")
    return float(value), True


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
        except YAMLError:
            return False


def _flow_seq(items: Any) -> CommentedSeq:
    seq = CommentedSeq(list(items))
    seq.fa.set_flow_style()
    return seq


def _flow_map(items: dict[str, Any]) -> CommentedMap:
    mapping = CommentedMap(items)
    mapping.fa.set_flow_style()
    return mapping
