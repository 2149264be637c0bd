"""Which Hermes home a command acts on, resolved the way Hermes itself resolves it.

Invariants:
- The home is `--hermes-home` when given, else `$HERMES_HOME`, else `~/.hermes` (Hermes's own
  order); it is always made absolute, because it ends up in the config entry's `env:`.
- `--profile NAME` selects `<root>/profiles/NAME`, where root is the home above, or that home's
  root when it already is a profile directory. Names follow Hermes's rule
  `^[a-z0-9][a-z0-9_-]{0,63}$`; anything else is a ConfigError before any file is touched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError

PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
CONFIG_NAME = "config.yaml"


@dataclass(frozen=True)
class HermesHome:
    path: Path
    profile: str | None = None

    @property
    def config(self) -> Path:
        return self.path / CONFIG_NAME

    def describe(self) -> str:
        return f"profile '{self.profile}' ({self.path})" if self.profile else str(self.path)


def resolve_home(hermes_home: str | os.PathLike[str] | None = None, profile: str | None = None) -> HermesHome:
    if hermes_home is not None:
        base = Path(hermes_home)
    elif os.environ.get("HERMES_HOME"):
        base = Path(os.environ["HERMES_HOME"])
    else:
        base = Path.home() / ".hermes"
    base = base.expanduser().absolute()
    if profile is None:
        return HermesHome(base)
    if not PROFILE_NAME.match(profile):
        raise ConfigError(f"profile name {profile!r} is not one Hermes accepts "
                          "(lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 64)")
    root = base.parent.parent if base.parent.name == "profiles" else base
    return HermesHome(root / "profiles" / profile, profile)
