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
- `compact` is written as the body's `--text-block compact`: the model reads the output and a
  one-line summary per turn instead of the whole trace (docs/wire-contract.md says when to use it).
- With `record`, the entry runs the recording relay (`python -m harness.replay.relay`) with this
  interpreter, and the relay runs the body: every Hermes session becomes a transcript.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.body import default_organs, find_body
from harness.errors import ConfigError
from harness.hermes_mount.config_file import ConfigDocument, HermesConfigError, as_hermes, load_config, render, write_config
from harness.hermes_mount.entry import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    DISCOVERY_KEY,
    EntrySpec,
    apply_entry,
    check_name,
    discovery_timeout,
    entry_command,
    find_entry,
    hermes_mismatches,
    remove_entry,
    restate_entry,
    servers_as_hermes,
    set_discovery_timeout,
)
from harness.hermes_mount.home import HermesHome
from harness.hermes_mount.probe import body_argv, hermes_child_env
from harness.hermes_mount.soul import SOUL_OPTION, SOUL_POLICIES
from harness.replay.recorder import RELAY_MODULE

COMPACT_TEXT_BLOCK = ("--text-block", "compact")


@dataclass
class Plan:
    home: HermesHome
    doc: ConfigDocument
    new_text: str
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.new_text != (self.doc.original or "")

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
               timeout: int = DEFAULT_TIMEOUT, connect_timeout: int = DEFAULT_CONNECT_TIMEOUT,
               record: str | None = None, soul: str | None = None, compact: bool = False) -> EntrySpec:
    """The entry to write; BodyNotFound / ConfigError when the body or fixture is missing.

    `soul` (keep, replace or off) becomes the body's `--soul`; None leaves the body's default, keep.
    """
    check_name(name)
    if timeout <= 0 or connect_timeout <= 0:
        raise ConfigError("--timeout and --connect-timeout must be positive numbers of seconds")
    if soul is not None and soul not in SOUL_POLICIES:
        raise ConfigError(f"--soul {soul}: use one of {', '.join(SOUL_POLICIES)}")
    executable = find_body(body).absolute()
    fixture = Path(organs).absolute() if organs else default_organs()
    if fixture is not None and not fixture.is_file():
        raise ConfigError(f"the organ fixture {fixture} does not exist")
    body_args: tuple[str, ...] = ("--organs", str(fixture)) if fixture is not None else ()
    if soul is not None:
        body_args += (SOUL_OPTION, soul)
    if compact:
        body_args += COMPACT_TEXT_BLOCK
    if record is None:
        return EntrySpec(name, executable, body_args, home.path, timeout, connect_timeout)
    relay_args = ("-m", RELAY_MODULE, "--out", str(Path(record).absolute()), "--title",
                  f"Recorded: a Hermes session with '{name}'", "--for-body", "ada", "--", str(executable), *body_args)
    return EntrySpec(name, Path(sys.executable), relay_args, home.path, timeout, connect_timeout)


def plan_mount(home: HermesHome, spec: EntrySpec, discovery: float | None) -> Plan:
    doc = load_config(home.config)
    notes = apply_entry(doc.data, spec)
    if discovery is not None:
        if discovery <= 0:
            raise ConfigError("--discovery-timeout must be a positive number of seconds")
        set_discovery_timeout(doc.data, discovery)
    discovery_timeout(doc.data)  # a malformed value is reported before anything is written
    if not doc.exact:
        notes.append("ruamel.yaml could not reproduce every line of the file exactly; "
                     "review the change with --dry-run (a backup is kept either way)")
    return Plan(home, doc, as_hermes_reads_it(doc, spec, discovery, notes), notes)


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


def spec_body(spec: EntrySpec) -> MountedBody:
    """The body an entry built from `spec` will run, as Hermes will run it."""
    return MountedBody(body_argv(str(spec.command), spec.args),
                       hermes_child_env({"HERMES_HOME": str(spec.hermes_home)}))


def mounted_body(home: HermesHome, name: str) -> MountedBody | None:
    """The body the home's entry `name` runs, as Hermes runs it; None when nothing is mounted."""
    entry = find_entry(load_config(home.config).data, name)
    if entry is None:
        return None
    command, args, env = entry_command(entry)
    return MountedBody(body_argv(command, args), hermes_child_env(env))


def plan_unmount(home: HermesHome, name: str) -> tuple[Plan, bool]:
    """The plan, and whether there was an entry to remove."""
    doc = load_config(home.config)
    if doc.original is None:
        return Plan(home, doc, ""), False
    removed = remove_entry(doc.data, name)
    if not removed:
        return Plan(home, doc, doc.original), False
    text = render(doc)
    if name in _servers_as_hermes(text, doc):
        raise HermesConfigError(f"{doc.path}: after removing mcp_servers.{name} Hermes would still read it "
                                "(a duplicate key?); the file was left untouched")
    return Plan(home, doc, text), True


def apply_plan(plan: Plan) -> Path | None:
    """Write the plan if it changes anything; returns the backup's path (None: no backup made)."""
    if not plan.changed:
        return None
    return write_config(plan.doc, plan.new_text)
