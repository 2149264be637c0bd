"""`serve`: the delegation seeds as an MCP server for host agents (Claude Code, Gemini CLI, Codex).

`jobs` keeps the jobs (one run a host can leave and come back to) and their store under the state
dir; `tools` declares the tools once (schemas, annotations, handlers); `server` puts them on the
official SDK's stdio server; `client_config` is what each host's configuration file needs.
"""
