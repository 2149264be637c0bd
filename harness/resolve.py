"""Settings resolved below both edges (the command line and `serve`): the delegation's provider and the folders a
host may name files under.

Both edges call these; neither builds the other's argument objects (the harness-seam issue moves the rest of the
resolution here).

Invariants:
- DEFAULT_PROVIDER is the seed's provider: an intent that names none is sent with it, and an intent that names one
  is sent with exactly that one; the transport refuses an answer from any other (`provider_fallback`), so there is
  no silent fallback either way.
- `ReadRoots.confine` is the one check of a file a host names through `serve` (a plan, an intent's project root):
  the path is resolved (symlinks followed, `..` collapsed) BEFORE it is compared, and it must then lie under the
  project root or under a folder the operator named at start-up (`serve --allow-dir DIR`). Its refusal names the
  path and the allowed folders, never anything read from the file (nothing is read before the check).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness import settings
from harness.errors import ConfigError
from harness.hermes.locate import HERMES_HOME_ENV

# The seed (autobot's delegate.py) sends every delegation with `--provider=minimax`.
DEFAULT_PROVIDER = "minimax"
# Hermes's provider ids (minimax, openrouter, custom, openai-codex, ...): lower-case words joined by '-', '_' or '.'.
PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
PROVIDER_RULE = "a Hermes provider id: lower-case letters, digits and '_.-', at most 64"


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


def named_hermes_home(explicit: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
                      ) -> Path | None:
    """The Hermes home the operator named (`--hermes-home`, else an exported $HERMES_HOME), absolute; None when
    neither is set, so a configuration written from it leaves Hermes's own default to Hermes."""
    if explicit:
        return settings.resolved(explicit, "--hermes-home")
    named = settings.env_value(HERMES_HOME_ENV, environ)
    return settings.resolved(named, f"${HERMES_HOME_ENV}") if named else None
