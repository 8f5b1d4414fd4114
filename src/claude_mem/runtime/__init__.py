"""The worker's life seen from outside it, and Claude Code's config (DESIGN §2a, §7). Stdlib at import:
the hooks, the CLI and the worker share it.

`discovery` (where the worker is, whether it answers), `launch`, `autostart` and `control` (start,
stop, inspect), `stale` (a worker whose code is gone), `origin` and `registered` (what a worker was
started for, and whether that is still installed), `interpreter` (the environment `claude-mem install`
recorded for the worker), `environment` (the plugin's own venv),
`observer_choice` (the `auto` provider rule), `claude_config`, `config_files` and `mcp_names`
(what `claude-mem install` writes and how Claude Code names our tools), `purge` (`uninstall --purge`).
"""
