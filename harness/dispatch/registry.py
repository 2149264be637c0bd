"""The agent registry: which named agent is which Hermes profile (shared by dispatch and later kernels).

YAML shape (every key but `agents` optional):

    sender: MARS                      # who the delegation prompt says the task is from
    agents:
      andy:   {profile: career-manager, good_at: [career, email], toolsets: [web, todo]}
      cooper: health-coach            # a bare string is just the profile
      judge:  {profile: tester, provider: minimax, model: MiniMax-M3, max_turns: 6}

`good_at` is what the agent is strong at (auto-pilot's selection matches it against a task);
`toolsets` the Hermes toolsets it may be given (auto-pilot narrows them further by autonomy band);
`provider`/`model` pin the route a run must be answered by (the transport fails any other);
`max_turns` caps its runs.

Invariants:
- Agent names and lookups are normalised the same way (surrounding whitespace dropped, inner runs
  of whitespace collapsed, case folded), so `" Andy "` finds `andy`.
- A registry is validated whole when loaded: a bad entry raises `RegistryError` naming its key,
  before anything is dispatched. Without a file, the seed's defaults apply (andy, cooper).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness import settings
from harness.errors import HarnessError
from harness.hermes.locate import is_profile_name
from harness.settings import AGENT_REGISTRY_ENV as REGISTRY_ENV

AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
DEFAULT_SENDER = "MARS"
DEFAULT_AGENTS = {"andy": "career-manager", "cooper": "health-coach"}
AGENT_KEYS = frozenset({"profile", "good_at", "toolsets", "provider", "model", "max_turns"})


class RegistryError(HarnessError):
    """The registry file is unusable; the message names the file and the key."""


@dataclass(frozen=True)
class Agent:
    name: str
    profile: str
    good_at: tuple[str, ...] = ()
    toolsets: tuple[str, ...] | None = None
    provider: str | None = None
    model: str | None = None
    max_turns: int | None = None


@dataclass(frozen=True)
class Registry:
    agents: dict[str, Agent]
    sender: str = DEFAULT_SENDER
    source: str = "built-in defaults"

    def lookup(self, name: str) -> Agent | None:
        return self.agents.get(normalize(name))

    @property
    def names(self) -> list[str]:
        return sorted(self.agents)


def normalize(name: str) -> str:
    return " ".join(name.split()).casefold()


def default_registry() -> Registry:
    return Registry({name: Agent(name, profile) for name, profile in DEFAULT_AGENTS.items()})


def load_registry(path: Path | None = None) -> Registry:
    """The registry at `path`, else at `$MAFIABOT_AGENT_REGISTRY`, else the defaults."""
    if path is None:
        path = settings.env_path(REGISTRY_ENV)
        if path is None:
            return default_registry()
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RegistryError(f"cannot read agent registry {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RegistryError(f"agent registry {path} is not valid YAML: {' '.join(str(exc).split())}") from None
    return parse_registry(document, str(path))


def parse_registry(document: Any, where: str) -> Registry:
    if not isinstance(document, dict) or not isinstance(document.get("agents"), dict) or not document["agents"]:
        raise RegistryError(f"{where}: expected a mapping with a non-empty 'agents' mapping")
    unknown = sorted(set(map(str, document)) - {"agents", "sender"})
    if unknown:
        raise RegistryError(f"{where}: unknown key(s): {', '.join(unknown)}")
    sender = document.get("sender", DEFAULT_SENDER)
    if not isinstance(sender, str) or not sender.strip() or "\n" in sender:
        raise RegistryError(f"{where}: 'sender' must be a one-line string")
    agents = {}
    for raw_name, entry in document["agents"].items():
        name = normalize(str(raw_name))
        if not AGENT_NAME.match(name):
            raise RegistryError(f"{where}: agents.{raw_name}: not an agent name (letters, digits, '_', '-')")
        if name in agents:
            raise RegistryError(f"{where}: agents.{raw_name}: listed twice (names are case-insensitive)")
        agents[name] = _parse_agent(name, entry, f"{where}: agents.{raw_name}")
    return Registry(agents, sender.strip(), where)


def _parse_agent(name: str, entry: Any, where: str) -> Agent:
    if isinstance(entry, str):
        entry = {"profile": entry}
    if not isinstance(entry, dict):
        raise RegistryError(f"{where}: must be a profile name or a mapping with 'profile'")
    unknown = sorted(set(map(str, entry)) - AGENT_KEYS)
    if unknown:
        raise RegistryError(f"{where}: unknown key(s): {', '.join(unknown)}")
    profile = entry.get("profile")
    if not is_profile_name(profile):
        raise RegistryError(f"{where}.profile: must be a Hermes profile name, got {profile!r}")
    good_at = _names(entry.get("good_at", []), f"{where}.good_at")
    toolsets = entry.get("toolsets")
    route = {key: _one_line(entry.get(key), f"{where}.{key}") for key in ("provider", "model")}
    max_turns = entry.get("max_turns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        raise RegistryError(f"{where}.max_turns: must be a positive integer, got {max_turns!r}")
    return Agent(name, profile, tuple(good_at),
                 tuple(_names(toolsets, f"{where}.toolsets")) if toolsets is not None else None,
                 route["provider"], route["model"], max_turns)


def _one_line(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or any(ch in value for ch in "\n\r\0"):
        raise RegistryError(f"{where}: must be a non-empty one-line string, got {value!r}")
    return value.strip()


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise RegistryError(f"{where}: must be a list of non-empty strings")
    return [v.strip() for v in value]
