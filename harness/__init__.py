"""mafiabot harness: a Python driver for the Ada MCP stdio body.

Layers, bottom to top: `body` (where the executable and fixtures are, how to
spell its command line), `client` (one body process driven over pipes, typed
requests), `trace` (a turn's structured result as a plain-text table), `cli`
(the `mafiabot-harness` commands). Only the CLI turns exceptions into exit
codes; every other layer raises `errors.HarnessError` subclasses.
"""

from harness.errors import BodyDied, BodyTimeout, HarnessError, RpcError, ToolError

__all__ = ["BodyDied", "BodyTimeout", "HarnessError", "RpcError", "ToolError"]
