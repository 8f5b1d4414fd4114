"""Helpers for the hook tests: run a hook the way Claude Code does, read what it stored."""

import json
import os
import sqlite3

from bench.plugin_hooks import HOOKS_JSON, plugin_command, run_hook  # noqa: F401 - shared with the benchmarks

from conftest import FIXTURES

PAYLOADS = os.path.join(FIXTURES, "hook-payloads")
EVENT_HOOK = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PostToolUse": "post-tool",
    "PostToolUseFailure": "post-tool",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
HOOKS = ("session-start", "user-prompt", "post-tool", "stop", "session-end")


def load(relative: str) -> dict:
    with open(os.path.join(PAYLOADS, relative), encoding="utf-8") as handle:
        return json.load(handle)


def fixture_files(folder: str = "") -> list[str]:
    directory = os.path.join(PAYLOADS, folder)
    return sorted(os.path.join(folder, name) for name in os.listdir(directory) if name.endswith(".json"))


def hook_for(payload: dict) -> str | None:
    return EVENT_HOOK.get(payload.get("hook_event_name", ""))


def rows(data_dir, sql: str, params: tuple = ()) -> list[tuple]:
    path = os.path.join(str(data_dir), "claude-mem.db")
    if not os.path.exists(path):
        return []
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def events(data_dir) -> list[dict]:
    """Every pending event as a dict with its payload decoded."""
    found = []
    for key, kind, number, payload in rows(
        data_dir, "SELECT event_key, kind, prompt_number, payload FROM pending_events ORDER BY id"
    ):
        found.append({"event_key": key, "kind": kind, "prompt_number": number, "payload": json.loads(payload)})
    return found


def all_files(data_dir) -> list[str]:
    paths = []
    for root, _dirs, names in os.walk(str(data_dir)):
        paths.extend(os.path.join(root, name) for name in names)
    return paths
