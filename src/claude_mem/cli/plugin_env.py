"""The worker's environment as `status` and `doctor` show it: the interpreter `claude-mem install`
recorded, the plugin's `<data dir>/venv` (its build's progress), and what stays on disk afterwards."""

from __future__ import annotations

import os
from typing import Any

from claude_mem.cli.output import human_bytes
from claude_mem.runtime import environment, interpreter


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
    recorded = interpreter.read(data_dir)
    return {**found, "venv": venv, "line": line, "shown": found["state"] != "absent", "recorded": recorded,
            "recorded_problem": interpreter.problem(recorded) if recorded else None}


def recorded_line(report: dict[str, Any]) -> str:
    """The interpreter `claude-mem install` recorded for the worker, and whether it can run it."""
    recorded = report["recorded"]
    if report["recorded_problem"]:
        return f"{recorded['python']} (recorded by `claude-mem install`) cannot run it: {report['recorded_problem']}"
    missing = recorded.get("missing") or {}
    extras = "; lacks " + "; ".join(f"[{group}]: {', '.join(names)}" for group, names in missing.items()) \
        if missing else ", every dependency imports"
    return f"{recorded['python']} (recorded by `claude-mem install` at {recorded.get('recorded')}{extras})"


def leftovers_line(found: dict[str, Any]) -> str:
    """What `purge.leftovers` found, for people: the data dir, the memory in it and the venv, with sizes."""
    if not found["exists"]:
        return f"nothing: {found['data_dir']} does not exist"
    parts = [f"your memory (database and backups, {human_bytes(int(found['memory_bytes']))})"]
    if found["venv"]:
        parts.append(f"the plugin's environment {found['venv']} ({human_bytes(int(found['venv_bytes']))})")
    return f"{found['data_dir']} ({human_bytes(int(found['bytes']))}): {', '.join(parts)}, settings and logs"
