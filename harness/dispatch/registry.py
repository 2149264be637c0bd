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
- A registry is validated whole when loaded, as the strict model `RegistryFile` (read by
  `strict_yaml`: size, depth, aliases and duplicate keys bounded first): a bad entry raises
  `RegistryError` naming the file and the dotted key (`agents.andy.profile`), before anything is
  dispatched. Without a file, the seed's defaults apply (andy, cooper).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from harness import settings, strict_yaml
from harness.errors import HarnessError
from harness.hermes.locate import ProfileName
from harness.settings import AGENT_REGISTRY_ENV as REGISTRY_ENV
from harness.strict_json import InputRejected
from harness.typed_inputs import Items, StrictModel, line, validate

AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
DEFAULT_SENDER = "MARS"
DEFAULT_AGENTS = {"andy": "career-manager", "cooper": "health-coach"}

Word = Annotated[str, line(200, strip=True)]
# Hermes's own default max_iterations; a cap above it would not cap anything.
MAX_TURNS_CAP = 250
TurnCap = Annotated[int, Field(ge=1, le=MAX_TURNS_CAP)]


class RegistryError(HarnessError):
    """The registry file is unusable; the message names the file and the key."""


class AgentEntry(StrictModel):
    """One agent of the file; a bare string stands for `{profile: STRING}`."""

    profile: ProfileName
    good_at: Items[Word] = ()
    toolsets: Items[Word] | None = None
    provider: Word | None = None
    model: Word | None = None
    max_turns: TurnCap | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_profile(cls, value: Any) -> Any:
        return {"profile": value} if isinstance(value, str) else value


def _some_agents(agents: dict[str, AgentEntry]) -> dict[str, AgentEntry]:
    if not agents:
        raise ValueError("must name at least one agent")
    return agents


class RegistryFile(StrictModel):
    """The registry file as written."""

    sender: Word = DEFAULT_SENDER
    agents: Annotated[dict[str, AgentEntry], AfterValidator(_some_agents)]


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
    chosen = settings.given(path, "--registry", REGISTRY_ENV)
    if chosen is None:
        return default_registry()
    path = chosen.path()
    try:
        document = strict_yaml.load_file(path)
    except InputRejected as exc:
        raise RegistryError(f"agent registry: {exc}") from None
    return parse_registry(document, str(path))


def parse_registry(document: Any, where: str) -> Registry:
    given = validate(RegistryFile, document, lambda field, message: RegistryError(f"{where}: {field}: {message}"),
                     root="(registry)")
    agents: dict[str, Agent] = {}
    for raw_name, entry in given.agents.items():
        name = normalize(raw_name)
        if not AGENT_NAME.fullmatch(name):
            raise RegistryError(f"{where}: agents.{raw_name}: not an agent name (letters, digits, '_', '-')")
        if name in agents:
            raise RegistryError(f"{where}: agents.{raw_name}: listed twice (names are case-insensitive)")
        agents[name] = Agent(name, entry.profile, entry.good_at, entry.toolsets, entry.provider, entry.model,
                             entry.max_turns)
    return Registry(agents, given.sender, where)
