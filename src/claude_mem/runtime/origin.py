"""What a worker was started for, so that it stops itself once that is uninstalled (`registered`).

The hook that starts a worker (`autostart`) names what registered it in `CLAUDE_MEM_WORKER_ORIGIN`:
the plugin (its root, `CLAUDE_PLUGIN_ROOT`, and Claude Code's config dir, which holds
`plugins/installed_plugins.json`), or else the settings files Claude Code read for that session
(user, the project's and its local one), where `claude-mem install` writes its hooks. A worker that
stopped itself says why in `worker-stopped.json` (status and doctor show it). Stdlib only and light:
`describe` runs on the hook path when a hook starts a worker.
"""

from __future__ import annotations

import os

from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Mapping
    from typing import Any

ENV = "CLAUDE_MEM_WORKER_ORIGIN"
STOPPED_NOTE = "worker-stopped.json"


def describe(environ: Mapping[str, str], cwd: str) -> str:
    """The origin of a worker a hook starts now, as the JSON for `ENV` (hook side: no file is read)."""
    custom = environ.get("CLAUDE_CONFIG_DIR")
    config = os.path.expanduser(custom or os.path.join("~", ".claude"))
    root = environ.get("CLAUDE_PLUGIN_ROOT")
    if root:
        return jsontext.dumps({"kind": "plugin", "root": root, "config": config})
    project = environ.get("CLAUDE_PROJECT_DIR") or cwd
    files = [os.path.join(config, "settings.json"), os.path.join(project, ".claude", "settings.json"),
             os.path.join(project, ".claude", "settings.local.json")]
    return jsontext.dumps({"kind": "settings", "files": files})


def parse(raw: str | None) -> dict[str, Any]:
    try:
        value = jsontext.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def load_json(path: str) -> Any:
    """The JSON value in `path`, or None when it is missing or not JSON."""
    try:
        with open(path, "rb") as handle:
            return jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None


def note_stopped(data_dir: str, why: str, pid: int) -> None:
    """Say in the data dir why the worker stopped itself (status and doctor show it)."""
    from claude_mem.domain import utc_stamp
    from claude_mem.runtime import discovery

    discovery.write_json(os.path.join(data_dir, STOPPED_NOTE), {"at": utc_stamp(), "why": why, "pid": pid})


def read_stopped(data_dir: str) -> dict[str, Any] | None:
    found = load_json(os.path.join(data_dir, STOPPED_NOTE))
    return found if isinstance(found, dict) else None


def clear_stopped(data_dir: str) -> None:
    try:
        os.remove(os.path.join(data_dir, STOPPED_NOTE))
    except FileNotFoundError:
        pass
