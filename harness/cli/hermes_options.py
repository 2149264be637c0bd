"""Command-line options shared by the command groups: the Hermes options, `--json`, the number and path types.

Not a command group (it registers nothing): it builds the parent parsers those groups share and hands the
parsed options to the resolvers below both edges (`harness.resolve`), so every command finds Hermes and the
project the same way, and as `serve` does.

Every argument that names a file or a folder has `type=FILE` or `type=DIRECTORY` (a `PathArgument`): its value
meets settings.PATH_RULE or is a usage error naming the option, and the hostile-input tests find it by its type
whatever its metavar.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from harness import resolve, settings
from harness.hermes import TransportSettings
from harness.hermes.locate import LOOKUP_ORDER


@dataclass(frozen=True)
class PathArgument:
    """argparse's `type=` for an argument naming a file or a folder: the text as given, or a usage error when no
    system call would take it (settings.PATH_RULE). `kind` says which it names; `words` are values the option
    takes besides a path (`--state off`)."""

    kind: Literal["file", "dir"]
    words: frozenset[str] = frozenset()

    def __call__(self, text: str) -> str:
        problem = None if text in self.words else settings.path_problem(text)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return text

    def also(self, words: Iterable[str]) -> PathArgument:
        return PathArgument(self.kind, frozenset(words))


FILE = PathArgument("file")
DIRECTORY = PathArgument("dir")


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
    group.add_argument("--hermes", metavar="BIN", type=FILE,
                       help=f"the hermes executable (default: {LOOKUP_ORDER})")
    group.add_argument("--hermes-home", metavar="DIR", type=DIRECTORY,
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


def database_parent() -> argparse.ArgumentParser:
    """`--database URL`: the queue and the ledger in that PostgreSQL database (docs/scale-out.md)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--database", metavar="URL",
                        help=f"a postgresql:// URL (libpq's parameters pass through): the queue and the ledger live "
                             f"in that database (default: ${settings.DATABASE_URL_ENV}, else the project's files)")
    return parent


def database_url(args: argparse.Namespace) -> str | None:
    return settings.database_url(getattr(args, "database", None))


def transport_settings(args: argparse.Namespace) -> TransportSettings:
    return resolve.transport(args.hermes, args.hermes_home)


def project_root(args: argparse.Namespace) -> Path:
    """--project-root, else $MAFIABOT_PROJECT_ROOT, else the current directory."""
    return resolve.project_root(getattr(args, "project_root", None))


def print_json(document: Any, args: argparse.Namespace, out: TextIO) -> None:
    indent = None if getattr(args, "compact", False) else 2
    print(json.dumps(document, ensure_ascii=False, indent=indent), file=out)
