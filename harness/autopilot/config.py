"""Sentinel thresholds: the contract's defaults, overridable from a YAML/JSON file within fixed ranges.

Invariants:
- Without a file every threshold is the contract's (auto-pilot seed + sentinel/config.json):
  loop similarity 0.85, depth 2, token bloat 3x, retry storm 5 per 60 s, stagnation 300 s,
  error cascade 2 consecutive / 3 in all, 6 attempts. `examples/autopilot/sentinel.yaml` holds the
  same values (a test keeps them equal).
- A file may tighten or loosen a threshold only inside its valid range (the ranges of the public
  sentinel config); `max_depth` may never exceed 2 and `attempts` never 6: those are hard caps,
  whatever the file says. The ranges are the model `SentinelFile` (strict: `true` is no number,
  `"5"` no integer); unknown keys, wrong types and values out of range are errors naming
  `sentinel.<key>` (`sentinel.retry_storm.max_retries`). The file is read by `strict_yaml`.
- The file is found as: the explicit path, else `$MAFIABOT_AUTOPILOT_SENTINEL`, else the defaults.
  The kernel passes the path to its children, so a re-entered kernel judges by the same thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from harness import settings, strict_yaml
from harness.autopilot.errors import PlanInvalid
from harness.settings import AUTOPILOT_SENTINEL_ENV as SENTINEL_ENV
from harness.strict_json import InputRejected
from harness.typed_inputs import StrictModel, validate

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


class RetryStormFile(StrictModel):
    max_retries: Annotated[int | None, Field(ge=3, le=10)] = None
    window_seconds: Annotated[float | None, Field(ge=10, le=600)] = None


class ErrorCascadeFile(StrictModel):
    consecutive: Annotated[int | None, Field(ge=2, le=5)] = None
    total: Annotated[int | None, Field(ge=2, le=10)] = None


class SentinelFile(StrictModel):
    """A sentinel file: each threshold optional (absent: the contract's default), each inside its range.

    A section's key maps to the attribute `<section>_<key>` of `SentinelConfig`."""

    task_similarity: Annotated[float | None, Field(ge=0.70, le=0.95)] = None
    max_depth: Annotated[int | None, Field(ge=1, le=HARD_MAX_DEPTH)] = None
    output_stagnation_similarity: Annotated[float | None, Field(ge=0.90, le=1.0)] = None
    stall_seconds: Annotated[float | None, Field(ge=60, le=600)] = None
    token_bloat_factor: Annotated[float | None, Field(ge=2.0, le=5.0)] = None
    retry_storm: RetryStormFile = RetryStormFile()
    error_cascade: ErrorCascadeFile = ErrorCascadeFile()
    attempts: Annotated[int | None, Field(ge=1, le=HARD_MAX_ATTEMPTS)] = None


def load_sentinel(path: Path | None = None, environ: Mapping[str, str] | None = None) -> SentinelConfig:
    """The config at `path`, else at `$MAFIABOT_AUTOPILOT_SENTINEL`, else the contract's defaults."""
    chosen = settings.given(path, "--sentinel", SENTINEL_ENV, environ)
    if chosen is None:
        return SentinelConfig()
    path = chosen.path()
    document = read_yaml(path, "sentinel")
    return parse_sentinel(document if document is not None else {}, str(path.resolve()))


def read_yaml(path: Path, field_name: str) -> Any:
    """The YAML (or JSON) document at `path`; PlanInvalid on `field_name` when it cannot be read or parsed."""
    try:
        return strict_yaml.load_file(path)
    except InputRejected as exc:
        raise PlanInvalid(field_name, str(exc)) from None


def parse_sentinel(document: Any, source: str) -> SentinelConfig:
    given = validate(SentinelFile, document, PlanInvalid, root="sentinel", prefix="sentinel.")
    values = {name: value for name, value in given.model_dump(exclude={"retry_storm", "error_cascade"}).items()
              if value is not None}
    for section in ("retry_storm", "error_cascade"):
        values.update({f"{section}_{key}": value for key, value in getattr(given, section).model_dump().items()
                       if value is not None})
    config = SentinelConfig(**values, source=source)
    if config.error_cascade_total < config.error_cascade_consecutive:
        raise PlanInvalid("sentinel.error_cascade.total", "must be at least error_cascade.consecutive")
    return config
