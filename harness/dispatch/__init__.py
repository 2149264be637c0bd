"""agent-dispatch: deliver a task to a named agent (a Hermes profile) and report delivery honestly.

`registry` maps agent names to Hermes profiles (shared with later orchestration); `dispatch`
validates the inputs, builds the seed's short delegation prompt, runs it through `harness.hermes`,
ledgers it, and returns the seed's `delivered` / `error` envelope.
"""

from harness.dispatch.dispatch import DispatchResult, DispatchSettings, dispatch, parse_context
from harness.dispatch.registry import Agent, Registry, RegistryError, default_registry, load_registry

__all__ = ["Agent", "DispatchResult", "DispatchSettings", "Registry", "RegistryError", "default_registry",
           "dispatch", "load_registry", "parse_context"]
