"""The Hermes transport: the one way the harness runs the Hermes Agent.

Layers, bottom to top: `config_yaml` (config.yaml read as Hermes reads it), `locate` (the one way
to find the executable, the homes and a profile's config), `command` (the argv and its size
limit), `process` (bounded, supervised run, whole-tree kill), `accounting` (Hermes's own record of
a run), `classify` (failure texts to reasons), `transport` (preflight, run, verdict).
`supervisor` is the small process between the harness and Hermes that stops the tree when the
harness goes; `cancellation` turns SIGTERM, SIGINT and SIGHUP into a stopped, ledgered run. Callers use
`HermesTransport().run(RunRequest(...)) -> RunOutcome`; a Hermes failure is an outcome with a
stable `reason`, never an exception. `Transport` is the seam a fake or another runner can fill.
"""

from harness.hermes.outcome import InvalidRunRequest, RunOutcome, RunRequest, Transport, Usage
from harness.hermes.transport import DELEGATED_ENV, HermesTransport, TransportSettings, delegated_marker

__all__ = [
    "DELEGATED_ENV",
    "HermesTransport",
    "InvalidRunRequest",
    "RunOutcome",
    "RunRequest",
    "Transport",
    "TransportSettings",
    "Usage",
    "delegated_marker",
]
