"""Rescue the capture tables of a corrupt database into the restored one (best effort).

After a restore from backup, what the hooks captured since that backup would be lost. Whatever rows
of `sessions`, `prompts` and unfinished `pending_events` can still be read from the corrupt copy are
inserted with `INSERT OR IGNORE` (rows the backup already has stay as they are), so the queue
survives and the observer redoes those events.
"""

from __future__ import annotations

import sqlite3
from typing import Any
from urllib.parse import quote

from claude_mem.store import db

SESSIONS_SQL = "SELECT id, content_session_id, project, cwd, status, started_at, last_activity_at FROM sessions"
PROMPTS_SQL = "SELECT session_id, prompt_number, text, private, created_at FROM prompts"
EVENTS_SQL = ("SELECT event_key, session_id, kind, prompt_number, payload, status, attempts, last_error, created_at "
              "FROM pending_events WHERE status != 'done'")


def readable_rows(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Every row that can be read before the corruption stops the scan."""
    rows: list[tuple[Any, ...]] = []
    try:
        cursor = conn.execute(sql)
        while True:
            batch = cursor.fetchmany(500)
            if not batch:
                break
            rows.extend(batch)
    except sqlite3.DatabaseError:
        pass
    return rows


def salvage_capture(corrupt_path: str, target_path: str) -> dict[str, int]:
    """Copy readable capture rows from `corrupt_path` into `target_path`; returns counts inserted."""
    source = sqlite3.connect(f"file:{quote(corrupt_path)}?mode=ro", uri=True, timeout=10)
    try:
        sessions = readable_rows(source, SESSIONS_SQL)
        prompts = readable_rows(source, PROMPTS_SQL)
        events = readable_rows(source, EVENTS_SQL)
    finally:
        source.close()
    counts = {"sessions": 0, "prompts": 0, "events": 0}
    if not sessions:
        return counts
    target = db.connect(target_path)
    try:
        with db.transaction(target):
            new_id: dict[int, int] = {}
            for old_id, content_session_id, project, cwd, status, started_at, last_activity_at in sessions:
                if not content_session_id or not project:
                    continue
                counts["sessions"] += target.execute(
                    "INSERT OR IGNORE INTO sessions (content_session_id, project, cwd, status, started_at, last_activity_at) "
                    "VALUES (?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), "
                    "coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
                    (content_session_id, project, cwd, status if status in ("active", "completed", "failed", "interrupted")
                     else "active", started_at, last_activity_at),
                ).rowcount
                row = target.execute("SELECT id FROM sessions WHERE content_session_id = ?", (content_session_id,)).fetchone()
                new_id[old_id] = row[0]
            for session_id, prompt_number, text, private, created_at in prompts:
                if session_id in new_id and text is not None:
                    counts["prompts"] += target.execute(
                        "INSERT OR IGNORE INTO prompts (session_id, prompt_number, text, private, created_at) "
                        "VALUES (?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
                        (new_id[session_id], prompt_number, text, private or 0, created_at),
                    ).rowcount
            for event_key, session_id, kind, prompt_number, payload, status, attempts, last_error, created_at in events:
                if session_id not in new_id or not event_key or payload is None:
                    continue
                try:
                    counts["events"] += target.execute(
                        "INSERT OR IGNORE INTO pending_events (event_key, session_id, kind, prompt_number, payload, status, "
                        "attempts, last_error, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
                        (event_key, new_id[session_id], kind, prompt_number, payload,
                         "failed" if status == "failed" else "pending", attempts or 0, last_error, created_at),
                    ).rowcount
                except sqlite3.IntegrityError:  # a kind this schema does not know: not ours to invent
                    continue
    finally:
        target.close()
    return counts
