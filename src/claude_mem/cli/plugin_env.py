"""The plugin's environment (`<data dir>/venv`) as `status` and `doctor` show it."""

from __future__ import annotations

import os
from typing import Any

from claude_mem.runtime import environment


def built_for(data_dir: str) -> str:
    """What the venv's marker says it was built from ("" when it has none)."""
    try:
        with open(os.path.join(environment.venv_dir(data_dir), environment.VENV_MARKER), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def environment_report(data_dir: str) -> dict[str, Any]:
    """`environment.state` plus `stale` (a venv of another version or an unfinished one, with no build
    running), the venv's path, one line for people, and whether `status` shows it."""
    found: dict[str, Any] = dict(environment.state(data_dir))
    venv = environment.venv_dir(data_dir)
    if found["state"] == "absent" and os.path.isdir(venv):
        marker = built_for(data_dir)
        found["state"] = "stale"
        found["built_for"] = marker
        line = (f"built for another version ({marker}; this is {environment.venv_stamp()}); the next session start "
                f"rebuilds it" if marker else "an unfinished build; the next session start rebuilds it")
    else:
        line = environment.describe(found)
    return {**found, "venv": venv, "line": line, "shown": found["state"] != "absent"}
