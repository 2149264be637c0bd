"""The harness's own version, as its installed distribution says (one source for `--version` and `serve`)."""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "mafiabot-harness"


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        # Run from a source tree that was never installed: say so rather than invent a number.
        return "(not installed)"
