"""A Hermes `config.yaml` read exactly as Hermes 0.19.0 reads it, so the harness never disagrees with it.

Hermes loads the file with PyYAML's safe loader (`utils.fast_safe_load`: `CSafeLoader` when libyaml
is there, else `SafeLoader`; the same result either way), which is YAML 1.1: `off`, `no`, `on`,
`yes` are booleans, `0o17` and `017` are octal, `1:30` is 90. ruamel.yaml (which the mount
commands use to keep the operator's comments) reads YAML 1.2, where `off` is a string; so every
decision about what Hermes will do is taken on this reading, and ruamel's is used only to write.

Invariants:
- `load_as_hermes(text)` is PyYAML `safe_load` with Hermes's loader; an empty document is `{}`
  (Hermes's `or {}`). It raises `yaml.YAMLError` as PyYAML does; callers decide what that means.
- `hermes_bool(value, default)` is `tools/mcp_tool.py::_parse_boolish`, the rule Hermes applies
  to an MCP server's `enabled` when it connects: a bool is itself; a string is true for
  true/1/yes/on and false for false/0/no/off (trimmed, any case); anything else (None, a number,
  a list) is the default. So `enabled: 0` (an int) is enabled for the agent, while a quoted `"0"`
  is not.
- `server_enabled(entry)` is that rule applied with Hermes's default (enabled when absent).
- `read_config(home)` never raises: an absent, oversized, unreadable or malformed file, one that is not a
  regular file (a FIFO is never waited on), or one whose top level is not a mapping, reads as `{}` (Hermes
  reports such a file itself when it runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.strict_json import InputRejected, read_bounded

CONFIG_NAME = "config.yaml"
# Hermes reads at most this much config; a larger file is not something we should parse either.
MAX_CONFIG_BYTES = 1 << 20
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})
HERMES_LOADER: Any = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


def load_as_hermes(text: str) -> Any:
    return yaml.load(text, Loader=HERMES_LOADER) or {}  # noqa: S506 (a safe loader)


def hermes_bool(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return default


def server_enabled(entry: Mapping[str, Any]) -> bool:
    return hermes_bool(entry.get("enabled", True), default=True)


def read_config(home: Path) -> dict[str, Any]:
    path = home / CONFIG_NAME
    try:  # a regular file only: a FIFO in its place must not hold every run of the profile before it starts
        data = read_bounded(path, MAX_CONFIG_BYTES)
        document = load_as_hermes(data.decode("utf-8"))
    except (InputRejected, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return document if isinstance(document, dict) else {}
