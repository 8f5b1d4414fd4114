"""What the session-start hook prints: Claude Code's JSON with the context to inject.

`build_output` hands over to the recall context builder (`claude_mem.recall.context`: the index
built straight from SQLite, DESIGN §6); when the project truly has no memory it states that as a
fact. Stdlib only.
"""

import os
import sqlite3

from claude_mem.recall import context
from claude_mem.store import db


def context_text(project: str) -> str:
    name = os.path.basename(project.rstrip(os.sep)) or project
    return (
        f"claude-mem: no memory stored yet for project {name}. "
        "What happens in this session is being recorded and will be summarised for future sessions."
    )


def build_output(conn: sqlite3.Connection | None, record: dict, settings: dict, incoming: dict | None = None) -> dict:
    """Claude Code's SessionStart output for `record` (`conn` is None when the database was busy).

    `incoming` is the raw payload (for `source`: resume shows only what is new to the session).
    """
    project = str(record.get("project") or "")
    source = (incoming or {}).get("source")
    data_dir = str(settings.get("data_dir") or "")
    reader = conn if conn is not None else db.connect_readonly(db.db_path(data_dir), db.HOOK_BUSY_MS)
    try:
        result = context.inject(
            reader, project, source if isinstance(source, str) else "startup",
            str(record.get("content_session_id") or "") or None, str(record.get("cwd") or ""), settings, data_dir,
        )
    finally:
        if conn is None and reader is not None:
            reader.close()
    if result["empty"] and not result["since"]:
        result["text"] = context_text(project)
    return context.hook_output(result)
