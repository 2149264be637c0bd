"""The two streams of every command: results on stdout (the handlers print them), errors on stderr.

Invariant: whatever a command says on stderr is one line per failure, `mafiabot-harness: ...`;
a multi-line detail (a body's stderr tail, a value holding newlines) is joined onto that line, so a
caller can read the failure as the last line of stderr and the code as the exit status.
"""

from __future__ import annotations

import sys

PROG = "mafiabot-harness"


def one_line(message: str) -> str:
    """A message on one line: a multi-line detail joined with ' | '."""
    return " | ".join(part.strip() for part in message.splitlines() if part.strip())


def print_error(message: str, prog: str = PROG) -> None:
    """`prog: message` on stderr, on one line."""
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
