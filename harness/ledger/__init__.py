"""The cost ledger: JSON lines of delegations and dispatches, appended under a lock and fsynced.

`durable` holds the crash-safe file primitives every state file of the harness uses; `store` the
ledger itself (append, read, verify); `records` turns a transport outcome into a ledger record
(with an optional parent id, so a tree of runs can be costed); `journal` records every spawned run
twice, `started` before the spawn and one settlement after, and settles the runs whose command died;
`report` and `chart` read it back, reconciling the two.
"""

from harness.ledger.store import Ledger, LedgerEntry, LedgerError, default_ledger_path

__all__ = ["Ledger", "LedgerEntry", "LedgerError", "default_ledger_path"]
