"""Mounting the body in the Hermes Agent: its config entry, and the checks an operator runs.

Layers, bottom to top: `home` (which Hermes home and config file, profiles included),
`config_file` (config.yaml read and written round-trip with ruamel.yaml, atomically, with
timestamped backup generations, its BOM and line endings kept), `entry` (the `mcp_servers`
entry of the body: build, settle against the one there, add or update, remove; `cognition`
sizes its `sampling:` block from the body's bounds), `level1` (the Level1 plugin's folder in the
home and its `plugins.enabled` item; the plugin itself is `harness.hermes_plugin`), `mount` (mount
and unmount as plans: the text before and after and the plugin's files, computed before any write),
`probe` (start the body as Hermes would and talk to it), `hermes_cli` (find the `hermes`
executable, run `hermes mcp test` and read what it printed), `doctor` (all checks in order).
Only `harness.cli.hermes_commands` prints and turns outcomes into exit codes. docs/hermes.md
is the operator's guide.
"""
