"""Developer replays: JSON-RPC sessions as hand-editable transcripts, recorded and replayed.

Layers, bottom to top: `transcript` (the file format: parse and write steps), `matching`
(partial matching of a reply against a pattern, and the readable diff of a mismatch),
`bodies` (which body command a replay runs against), `runner` (one transcript against one
body process), `recorder` (a relay between a client and a body that writes a transcript),
`relay` (the relay as a process a client can spawn in place of the body). Only
`harness.cli.replay_commands` turns outcomes into exit codes. The format is documented in
docs/replays.md.
"""

from harness.replay.transcript import Transcript, TranscriptError, load_transcript

__all__ = ["Transcript", "TranscriptError", "load_transcript"]
