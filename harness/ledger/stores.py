"""Which ledger store a command opens: the file at a path, or the team's database (`--database`).

Invariants:
- One rule for every caller: with a database URL the ledger is that database's (`PgLedger`), its run
  journals in the folder the file ledger would sit in (this machine's state folder of the project); without
  one it is the file. The session opened for it is closed when the caller is done with the ledger.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.ledger.store import Ledger, LedgerStore


@contextmanager
def opened_ledger(path: Path, database: str | None) -> Iterator[LedgerStore]:
    """The ledger file `path`, or, when `database` names one, that database's ledger journalled beside `path`."""
    if database is None:
        yield Ledger(path)
        return
    from harness.database import connect  # noqa: PLC0415 (the driver is optional: imported only when named)
    from harness.ledger.pg_store import PgLedger  # noqa: PLC0415
    with connect(database) as session:
        yield PgLedger(session, path.parent)
