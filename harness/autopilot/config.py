"""Sentinel thresholds: the contract's defaults, overridable from a YAML/JSON file within fixed ranges.

Invariants:
- Without a file every threshold is the contract's (auto-pilot seed + sentinel/config.json):
  loop similarity 0.85, depth 2, token bloat 3x, retry storm 5 per 60 s, stagnation 300 s,
  error cascade 2 consecutive / 3 in all, 6 attempts. `examples/autopilot/sentinel.yaml` holds the
  same values (a test keeps them equal).
- A file may tighten or loosen a threshold only inside its valid range (the ranges of the public
  sentinel config); `max_depth` may never exceed 2 and `attempts` never 6: those are hard caps,
  whatever the file says. Unknown keys and wrong types are errors naming `sentinel.<key>`.
- The file is found as: the explicit path, else `$MAFIABOT_AUTOPILOT_SENTINEL`, else the defaults.
  The kernel passes the path to its children, so a re-entered kernel judges by the same thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from harness import settings
from harness.autopilot.errors import PlanInvalid
from harness.settings import AUTOPILOT_SENTINEL_ENV as SENTINEL_ENV

HARD_MAX_DEPTH = 2
HARD_MAX_ATTEMPTS = 6


@dataclass(frozen=True)
class SentinelConfig:
    task_similarity: float = 0.85
    max_depth: int = HARD_MAX_DEPTH
    output_stagnation_similarity: float = 1.0
    stall_seconds: float = 300.0
    token_bloat_factor: float = 3.0
    retry_storm_max_retries: int = 5
    retry_storm_window_seconds: float = 60.0
    error_cascade_consecutive: int = 2
    error_cascade_total: int = 3
    attempts: int = HARD_MAX_ATTEMPTS
    source: str = "built-in defaults"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# key in the file -> (attribute, type, low, high)
SCHEMA: dict[str, tuple[str, type, float, float]] = {
    "task_similarity": ("task_similarity", float, 0.70, 0.95),
    "max_depth": ("max_depth", int, 1, HARD_MAX_DEPTH),
    "output_stagnation_similarity": ("output_stagnation_similarity", float, 0.90, 1.0),
    "stall_seconds": ("stall_seconds", float, 60, 600),
    "token_bloat_factor": ("token_bloat_factor", float, 2.0, 5.0),
    "retry_storm.max_retries": ("retry_storm_max_retries", int, 3, 10),
    "retry_storm.window_seconds": ("retry_storm_window_seconds", float, 10, 600),
    "error_cascade.consecutive": ("error_cascade_consecutive", int, 2, 5),
    "error_cascade.total": ("error_cascade_total", int, 2, 10),
    "attempts": ("attempts", int, 1, HARD_MAX_ATTEMPTS),
}
SECTIONS = frozenset(key.split(".")[0] for key in SCHEMA if "." in key)


def load_sentinel(path: Path | None = None, environ: Mapping[str, str] | None = None) -> SentinelConfig:
    """The config at `path`, else at `$MAFIABOT_AUTOPILOT_SENTINEL`, else the contract's defaults."""
    if path is None:
        named = settings.env_value(SENTINEL_ENV, environ)
        if not named:
            return SentinelConfig()
        path = Path(named)
    document = read_yaml(path, "sentinel")
    return parse_sentinel(document if document is not None else {}, str(path.resolve()))


def read_yaml(path: Path, field_name: str) -> Any:
    """The YAML (or JSON) document at `path`; PlanInvalid on `field_name` when it cannot be read or parsed."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanInvalid(field_name, f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PlanInvalid(field_name, f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None


def parse_sentinel(document: Any, source: str) -> SentinelConfig:
    if not isinstance(document, dict):
        raise PlanInvalid("sentinel", f"{source}: expected a mapping of thresholds")
    flat: dict[str, Any] = {}
    for key, value in document.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise PlanInvalid(f"sentinel.{key}", "must be a mapping")
            flat.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            flat[str(key)] = value
    unknown = sorted(set(flat) - set(SCHEMA))
    if unknown:
        raise PlanInvalid(f"sentinel.{unknown[0]}", f"is not a sentinel threshold (known: {', '.join(SCHEMA)})")
    values: dict[str, Any] = {}
    for key, value in flat.items():
        attribute, kind, low, high = SCHEMA[key]
        values[attribute] = number_in_range(f"sentinel.{key}", value, kind, low, high)
    config = SentinelConfig(**values, source=source)
    if config.error_cascade_total < config.error_cascade_consecutive:
        raise PlanInvalid("sentinel.error_cascade.total", "must be at least error_cascade.consecutive")
    return config


def number_in_range(field_name: str, value: Any, kind: type, low: float, high: float) -> Any:
    """`value` as `kind` (int or float; booleans are not numbers), or PlanInvalid naming `field_name`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise PlanInvalid(field_name, f"must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    if not math.isfinite(value) or not low <= value <= high:
        raise PlanInvalid(field_name, f"must be between {low:g} and {high:g}, got {value!r}")
    return kind(value)
