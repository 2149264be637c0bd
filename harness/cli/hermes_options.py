"""Command-line options shared by the commands that call Hermes (delegate, drain, dispatch).

Not a command group (it registers nothing): it builds the parent parser those groups share and
turns the parsed options into `TransportSettings`, so every such command finds Hermes the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from harness import settings
from harness.hermes import TransportSettings
from harness.hermes.locate import LOOKUP_ORDER


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def hermes_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("hermes")
    group.add_argument("--hermes", metavar="BIN",
                       help=f"the hermes executable (default: {LOOKUP_ORDER})")
    group.add_argument("--hermes-home", metavar="DIR",
                       help="Hermes's home, whose root (derived as Hermes derives it) holds profiles/ "
                            "(default: $HERMES_HOME, else ~/.hermes)")
    return parent


def json_parent(*, always_json: bool = True) -> argparse.ArgumentParser:
    """`--json` and `--compact`, as OUTPUT_RULE (harness.cli) defines them for every command.

    `always_json`: the command's result is a JSON envelope whatever the flags (its seed says so), and
    `--json` is accepted so that a caller can pass it to every command alike.
    """
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--json", action="store_true",
                        help="the result is JSON already; accepted for uniformity" if always_json
                        else "print the result as one JSON document instead of text")
    parent.add_argument("--compact", action="store_true", help="print JSON on one line")
    return parent


def transport_settings(args: argparse.Namespace) -> TransportSettings:
    return TransportSettings(hermes_bin=Path(args.hermes) if args.hermes else None,
                             hermes_home=Path(args.hermes_home) if args.hermes_home else None)


def project_root(args: argparse.Namespace) -> Path:
    """--project-root, else $MAFIABOT_PROJECT_ROOT, else the current directory."""
    return settings.project_root(getattr(args, "project_root", None))


def print_json(document: Any, args: argparse.Namespace, out: TextIO) -> None:
    indent = None if getattr(args, "compact", False) else 2
    print(json.dumps(document, ensure_ascii=False, indent=indent), file=out)
