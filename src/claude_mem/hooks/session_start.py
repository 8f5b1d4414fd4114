"""What the session-start hook prints: Claude Code's JSON with the context to inject.

The text comes from `claude_mem.recall.context.inject` — the same builder behind `claude-mem context`
and `GET /api/context` (the index straight from SQLite, DESIGN §6), which also records when the
session received it. While the plugin's environment is still being built (first run), the message
shown to the user says so (`runtime.environment.session_notice`). Stdlib only.
"""

from __future__ import annotations

from claude_mem import store
from claude_mem.recall import context
from claude_mem.store import Store, projects

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any


def build_output(conn: Store | None, record: dict[str, Any], settings: dict[str, Any],
                 incoming: dict[str, Any] | None = None) -> dict[str, Any]:
    """Claude Code's SessionStart output for `record` (`conn` is None when the database was busy).

    `incoming` is the raw payload (for `source`: resume shows only what is new to the session).
    """
    project = str(record.get("project") or "")
    source = (incoming or {}).get("source")
    data_dir = str(settings.get("data_dir") or "")
    reader = conn if conn is not None else _reader(data_dir)
    if conn is None:  # spooled: the store has not mapped a moved checkout to its project yet
        project = projects.resolve(reader, project, record.get("remote"))
    try:
        result = context.inject(
            reader, project, source if isinstance(source, str) else "startup",
            str(record.get("content_session_id") or "") or None, str(record.get("cwd") or ""), settings, data_dir,
        )
    finally:
        if conn is None and reader is not None:
            reader.close()
    from claude_mem.runtime import environment

    notice = environment.session_notice(data_dir)
    if notice:
        result = {**result, "system_message": "%s; %s" % (result["system_message"], notice)}
    return context.hook_output(result)


def _reader(data_dir: str) -> Store | None:
    """The database to read the context from, None before anything was ever stored."""
    try:
        return store.open(data_dir, readonly=True, busy_timeout_ms=store.HOOK_BUSY_MS)
    except store.NoDatabase:
        return None
