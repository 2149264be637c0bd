"""The delegation suites (autobot, agent-dispatch, the Hermes transport, the ledger); a package so its
conftest and helpers never shadow the top-level ones."""
