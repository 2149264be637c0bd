"""Where Hermes is: its executable, its root home, a profile's home, and what that profile configures.

Invariants:
- The executable is the explicit setting, else `$MAFIABOT_HERMES`, else `hermes` on PATH; a
  setting that names a missing or non-executable file is "not found", never silently replaced.
- The root home follows Hermes's own rule: the explicit setting, else `$HERMES_HOME` (its
  grandparent when it already points at `<root>/profiles/<name>`), else `~/.hermes`. Profile
  `default` (or none) is the root itself; profile `P` is `<root>/profiles/P`. The transport passes
  this root to the child as `HERMES_HOME`, so both sides always agree on the home.
- Reading a profile's config is best effort and read-only: an unreadable or malformed file yields
  an empty mapping, and Hermes itself reports it when it runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERMES_BIN_ENV = "MAFIABOT_HERMES"
HERMES_HOME_ENV = "HERMES_HOME"
# Hermes reads at most this much config; a larger file is not something we should parse either.
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Route:
    """A provider and model, compared the way Hermes names them (case-insensitive, `vendor/` prefix ignored)."""

    provider: str | None
    model: str | None

    def matches(self, other: "Route") -> bool:
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


def find_executable(explicit: str | os.PathLike[str] | None = None,
                    environ: Mapping[str, str] | None = None) -> Path | None:
    """The Hermes executable, or None when there is none to run."""
    env = os.environ if environ is None else environ
    named = explicit if explicit is not None else env.get(HERMES_BIN_ENV) or None
    if named is not None:
        path = Path(named).expanduser()
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("hermes", path=env.get("PATH"))
    return Path(found) if found else None


def hermes_root(explicit: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if explicit is not None:
        return Path(explicit).expanduser()
    from_env = env.get(HERMES_HOME_ENV)
    if from_env:
        path = Path(from_env).expanduser()
        return path.parent.parent if path.parent.name == "profiles" else path
    return Path(env.get("HOME") or Path.home()) / ".hermes"


def profile_home(root: Path, profile: str | None) -> Path:
    return root if profile in (None, "default") else root / "profiles" / profile


def read_config(home: Path) -> dict[str, Any]:
    path = home / "config.yaml"
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return {}
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return document if isinstance(document, dict) else {}


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
    routes = []
    for key in ("fallback_providers", "fallback_model"):
        raw = config.get(key)
        entries = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
        for entry in entries:
            if isinstance(entry, dict) and entry.get("provider") and entry.get("model"):
                routes.append(Route(str(entry["provider"]), str(entry["model"])))
    return routes
