"""autobot: hand a bounded task to a Hermes sub-agent, cost-audited, locked, queued.

Layers, bottom to top: `intent` (the seed's schema), `materials` (target_paths read and capped),
`prompt` (materials fenced as data), `output` (expected_output checks), `writer` (where answers may
go, and writing them without tearing), `delegate` (one delegation → envelope + ledger record),
`queue` (enqueue / drain with retries and a dead-letter folder). The Hermes call itself goes
through `harness.hermes`; the record through `harness.ledger`.
"""

from harness.autobot.delegate import AutobotSettings, Envelope, delegate
from harness.autobot.intent import Intent, IntentError, parse_intent

__all__ = ["AutobotSettings", "Envelope", "Intent", "IntentError", "delegate", "parse_intent"]
