"""What the session-start hook prints: Claude Code's JSON with the context to inject.

`build_output` is the one place the recall issue replaces (with the real index built from
SQLite); until then it states, as a fact, that no memory exists yet. Stdlib only.
"""

import os
import sqlite3


def context_text(project: str) -> str:
    name = os.path.basename(project.rstrip(os.sep)) or project
    return (
        f"claude-mem: no memory stored yet for project {name}. "
        "What happens in this session is being recorded and will be summarised for future sessions."
    )


def build_output(conn: sqlite3.Connection | None, record: dict, settings: dict) -> dict:
    """Claude Code's SessionStart output for `record` (`conn` is None when the database was busy)."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context_text(str(record.get("project") or "")),
        }
    }
