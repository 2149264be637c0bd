"""Which Hermes home a command acts on, resolved the way Hermes itself resolves it.

Invariants:
- Without `--profile`, the home is Hermes's active home: `--hermes-home` when given, else
  `$HERMES_HOME`, else `~/.hermes` (`harness.hermes.locate.active_home`); always absolute,
  because it ends up in the config entry's `env:`.
- `--profile NAME` selects `<root>/profiles/NAME` (`default` is the root itself), where the root
  is derived from that home by Hermes's own rule (`locate.hermes_root`). The name must satisfy
  `locate.PROFILE_NAME`; anything else is a ConfigError before any file is touched.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.hermes.config_yaml import CONFIG_NAME
from harness.hermes.locate import PROFILE_RULE, active_home, hermes_root, is_profile_name, profile_home
from harness.hermes_mount.entry import DEFAULT_NAME


@dataclass(frozen=True)
class HermesHome:
    path: Path
    profile: str | None = None
    # The --hermes-home it was resolved from, if one was given: what a follow-up command needs to find it again.
    given: Path | None = None

    @property
    def config(self) -> Path:
        return self.path / CONFIG_NAME

    def describe(self) -> str:
        return f"profile '{self.profile}' ({self.path})" if self.profile else str(self.path)

    def options(self, name: str) -> str:
        """The options that have a later command act on this home's entry `name` (the hints print them)."""
        given = f" --hermes-home {shlex.quote(str(self.given))}" if self.given is not None else ""
        profile = f" --profile {self.profile}" if self.profile else ""
        return given + profile + (f" --name {shlex.quote(name)}" if name != DEFAULT_NAME else "")


def resolve_home(hermes_home: str | os.PathLike[str] | None = None, profile: str | None = None) -> HermesHome:
    given = Path(hermes_home).absolute() if hermes_home is not None else None
    if profile is None:
        return HermesHome(active_home(hermes_home), given=given)
    if not is_profile_name(profile):
        raise ConfigError(f"profile name {profile!r} is not one Hermes accepts ({PROFILE_RULE})")
    return HermesHome(profile_home(hermes_root(hermes_home), profile), profile, given)
