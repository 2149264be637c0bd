"""The cost ledger: one JSON line per delegation or dispatch, appended under a lock and fsynced.

`durable` holds the crash-safe file primitives every state file of the harness uses; `store` the
ledger itself (append, read, verify); `records` turns a transport outcome into a ledger record
(with an optional parent id, so a tree of runs can be costed); `report` and `chart` read it back.
"""

from harness.ledger.store import Ledger, LedgerEntry, LedgerError, default_ledger_path

__all__ = ["Ledger", "LedgerEntry", "LedgerError", "default_ledger_path"]
