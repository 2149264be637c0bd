"""`ledger --png FILE`: spend and calls per day, drawn with matplotlib (the optional `charts` extra).

Invariants:
- matplotlib is imported only here and only when a chart is asked for, with the file-only Agg
  backend, so the ledger commands work without it and never need a display.
- The PNG is written atomically (temp + rename), like every other file the harness writes.
"""

from __future__ import annotations

import io
from pathlib import Path

from harness.durable import atomic_write
from harness.errors import HarnessError
from harness.ledger.report import Summary


class ChartUnavailable(HarnessError):
    """matplotlib is not installed."""


def draw(summary: Summary, target: Path) -> None:
    try:
        # matplotlib is the optional `charts` extra: imported only when a chart is drawn.
        import matplotlib  # noqa: PLC0415
        matplotlib.use("Agg")
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError:
        raise ChartUnavailable("drawing needs matplotlib: pip install 'mafiabot-harness[charts]'") from None
    days = sorted(summary.by["day"])
    totals = [summary.by["day"][d] for d in days]
    figure, (spend, calls) = pyplot.subplots(2, 1, figsize=(max(6.0, 0.6 * len(days) + 2), 6), sharex=True)
    positions = range(len(days))
    spend.bar(positions, [t.cost_usd for t in totals], color="#4a7ab5")
    spend.set_ylabel("reported spend (USD)")
    spend.set_title("Hermes delegations and dispatches per day")
    calls.bar(positions, [t.ok for t in totals], color="#5a9e5a", label="ok / delivered")
    calls.bar(positions, [t.failed for t in totals], bottom=[t.ok for t in totals], color="#c0504d",
              label="degraded / error")
    calls.set_ylabel("calls")
    calls.legend(loc="upper left")
    calls.set_xticks(list(positions), days, rotation=45, ha="right")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    pyplot.close(figure)
    atomic_write(target, buffer.getvalue())
