"""Where Hermes is: its executable, its root, a profile's home, and what that profile configures.

This is the one place the harness finds Hermes; every command (mount, doctor, delegate, drain,
dispatch, autopilot) goes through it, so they all run and configure the same Hermes.

Invariants:
- The executable is the explicit setting (`--hermes`), else `$MAFIABOT_HERMES`, else the project's
  `<checkout>/.hermes-venv/bin/hermes` (see `harness.settings.checkout`), else `hermes` on PATH. A
  setting that names a missing or non-executable file is "not found", never silently replaced by
  a later step of the order.
- Homes follow Hermes's own rules (hermes_constants.py): the *active home* (what Hermes uses when
  no profile is named) is the explicit setting, else `$HERMES_HOME`, else `~/.hermes` with `~`
  from `settings.user_home` (`Path.home()` for the given environment). The *root* holding
  `profiles/` is derived from the active home as `get_default_hermes_root` does: `~/.hermes` when
  the active home lies under it, else the home's grandparent when the home is `<root>/profiles/<name>`,
  else the home itself. Profile `default` is the root; profile `P` is `<root>/profiles/P`.
  Every returned home is absolute. The transport passes the root to the child as `HERMES_HOME`
  with `--profile`, so both sides always agree on the home.
- A profile name is `PROFILE_NAME` (Hermes's `_PROFILE_ID_RE`); this is the only copy of the rule.
- Reading a profile's config is `config_yaml.read_config`: Hermes's own YAML reading, best effort.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from harness import settings
from harness.errors import ConfigError
from harness.hermes.config_yaml import read_config
from harness.settings import HERMES_BIN_ENV
from harness.typed_inputs import matching

HERMES_HOME_ENV = "HERMES_HOME"
PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
PROFILE_RULE = "lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 64"
DEFAULT_PROFILE = "default"
PROJECT_HERMES = settings.HERMES_VENV / "bin" / "hermes"
# For --help texts: the order of `find_executable` after the explicit option.
LOOKUP_ORDER = f"${HERMES_BIN_ENV}, else the checkout's {PROJECT_HERMES}, else `hermes` on PATH"

__all__ = ["DEFAULT_PROFILE", "HERMES_BIN_ENV", "HERMES_HOME_ENV", "LOOKUP_ORDER", "PROFILE_NAME", "PROFILE_RULE", "ProfileName",
           "Route", "active_home", "check_named", "configured_fallbacks", "configured_route", "find_executable",
           "hermes_root", "is_profile_name", "not_found_detail", "profile_home", "project_hermes", "read_config"]


ProfileName = Annotated[str, matching(PROFILE_NAME, f"a Hermes profile name ({PROFILE_RULE})")]
"""A Hermes profile's name, as `hermes -p NAME` accepts it (the typed inputs' field for it)."""


def is_profile_name(name: object) -> bool:
    return isinstance(name, str) and PROFILE_NAME.fullmatch(name) is not None


def project_hermes(environ: Mapping[str, str] | None = None) -> Path | None:
    """The project's own Hermes (`make hermes`), whether or not it is installed; None without a checkout."""
    return settings.checkout_file(PROJECT_HERMES, environ)


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_executable(explicit: str | os.PathLike[str] | None = None,
                    environ: Mapping[str, str] | None = None) -> Path | None:
    """The Hermes executable, or None when there is none to run."""
    named = settings.given(explicit, "--hermes", HERMES_BIN_ENV, environ)
    if named is not None:
        path = settings.checked_path(named.text, named.source).expanduser().absolute()
        return path if _runnable(path) else None
    project = project_hermes(environ)
    if project is not None and _runnable(project):
        return project
    found = shutil.which("hermes", path=settings.environment(environ).get("PATH"))
    return Path(found).absolute() if found else None


def not_found_detail(explicit: str | os.PathLike[str] | None = None,
                     environ: Mapping[str, str] | None = None) -> str:
    """Why `find_executable` found nothing, in one line saying what to do."""
    named = settings.given(explicit, "--hermes", HERMES_BIN_ENV, environ)
    if named is not None:
        return f"the Hermes executable {named.text} does not exist or is not executable"
    project = project_hermes(environ)
    looked = f"{project} does not exist" if project is not None else settings.no_checkout_hint()
    return (f"Hermes not found: {looked} and there is no `hermes` on PATH; run `make hermes` in the checkout, "
            f"or point {HERMES_BIN_ENV} at a hermes executable")


def check_named(hermes_bin: str | os.PathLike[str] | None, hermes_home: str | os.PathLike[str] | None) -> None:
    """ConfigError when the executable or the home a command line names could serve no run: an executable that is
    not a runnable file, a home that cannot be resolved or is there and no folder.

    For the commands that may end without starting a run (auto-pilot's check, an empty drain, an idle server):
    the option is refused when given, not when a run first needs it. Unnamed ones are the environment's, looked up
    by the run that needs them, as every command does."""
    if hermes_bin is not None and find_executable(hermes_bin) is None:
        raise ConfigError(f"--hermes: {not_found_detail(hermes_bin)}")
    if hermes_home is not None:
        home = settings.resolved(hermes_home, "--hermes-home")
        if home.exists() and not home.is_dir():
            raise ConfigError(f"--hermes-home: {os.fspath(hermes_home)} is not a directory")


def active_home(explicit: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> Path:
    """The home Hermes uses when no profile is named."""
    if explicit is not None:
        return settings.checked_path(os.fspath(explicit), "--hermes-home").expanduser().absolute()
    from_env = settings.environment(environ).get(HERMES_HOME_ENV, "").strip()
    if from_env:
        return settings.checked_path(from_env, f"${HERMES_HOME_ENV}").absolute()
    return settings.user_home(environ) / ".hermes"


def hermes_root(explicit: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> Path:
    """The directory holding `profiles/`, for the active home `explicit` (or the environment's)."""
    home = active_home(explicit, environ)
    native = settings.user_home(environ) / ".hermes"
    if _within(home, native):
        return native
    return home.parent.parent if home.parent.name == "profiles" else home


def _within(path: Path, base: Path) -> bool:
    try:
        return path.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop: compare the paths as written
        return path.is_relative_to(base)


def profile_home(root: Path, profile: str | None) -> Path:
    return root if profile in (None, DEFAULT_PROFILE) else root / "profiles" / str(profile)


@dataclass(frozen=True)
class Route:
    """A provider and model, compared the way Hermes names them (case-insensitive, `vendor/` prefix ignored)."""

    provider: str | None
    model: str | None

    def matches(self, other: Route) -> bool:
        return (_same(self.provider, other.provider, strip_vendor=False)
                and _same(self.model, other.model, strip_vendor=True))

    def __str__(self) -> str:
        return f"{self.provider or '?'}/{self.model or '?'}"


def _same(expected: str | None, actual: str | None, strip_vendor: bool) -> bool:
    if expected is None:
        return True
    if actual is None:
        return False
    a, b = expected.strip().lower(), actual.strip().lower()
    if strip_vendor:
        a, b = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    return a == b


def configured_route(config: Mapping[str, Any]) -> Route:
    """The provider and model a profile answers with when the caller names neither."""
    model = config.get("model")
    if isinstance(model, str):
        return Route(None, model)
    if isinstance(model, dict):
        name = model.get("default") or model.get("model")
        provider = model.get("provider")
        return Route(provider if isinstance(provider, str) else None, name if isinstance(name, str) else None)
    return Route(None, None)


def configured_fallbacks(config: Mapping[str, Any]) -> list[Route]:
    """The fallback chain Hermes would try after the primary fails (`fallback_providers`, `fallback_model`)."""
    routes: list[Route] = []
    for key in ("fallback_providers", "fallback_model"):
        raw = config.get(key)
        entries = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
        routes.extend(Route(str(entry["provider"]), str(entry["model"])) for entry in entries
                      if isinstance(entry, dict) and entry.get("provider") and entry.get("model"))
    return routes
