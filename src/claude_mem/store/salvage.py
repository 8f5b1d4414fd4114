"""Rescue the capture tables of a corrupt database into the restored one (best effort).

After a restore from backup, what the hooks captured since that backup would be lost. Whatever rows
of `sessions`, `prompts` and `pending_events` can still be read from the corrupt copy are inserted
with `INSERT OR IGNORE` (rows the backup already has stay as they are), sessions and prompts with the
global `uid` they had (m006; a copy from before it gets new ones). Events are queued again —
even those observed before the damage, since their observations went with the corrupt copy — so
the observer redoes them and the memory since the backup comes back.
"""

from __future__ import annotations

import sqlite3
from typing import Any
from urllib.parse import quote

from claude_mem.store import db

SESSIONS = ("sessions", "id, content_session_id, project, cwd, status, started_at, last_activity_at", "")
PROMPTS = ("prompts", "session_id, prompt_number, text, private, created_at", "")
EVENTS = ("pending_events", "event_key, session_id, kind, prompt_number, payload, status, attempts, last_error, created_at",
          "")
# Past the last row found, probing stops after this many missing rowids (when the table's end is unknown).
PROBE_GAP = 5_000


def readable_rows(conn: sqlite3.Connection, table: str, columns: str, where: str = "") -> list[tuple[Any, ...]]:
    """Every row of `table` stored on a readable page.

    A plain scan stops at the first damaged page, losing every row after it. So when the scan fails,
    each rowid is looked up on its own: a lookup only reads the pages on its path, and rows on
    intact pages come back whatever is broken elsewhere.
    """
    condition = f" WHERE {where}" if where else ""
    try:
        return conn.execute(f"SELECT {columns} FROM {table}{condition}").fetchall()
    except sqlite3.DatabaseError:
        pass
    one = f"SELECT {columns} FROM {table} WHERE rowid = ?" + (f" AND ({where})" if where else "")
    rows: list[tuple[Any, ...]] = []
    last = _last_rowid(conn, table)
    rowid, found_at = 0, 0
    while rowid < (last if last is not None else found_at + PROBE_GAP):
        rowid += 1
        try:
            row = conn.execute(one, (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None:
            rows.append(row)
            found_at = rowid
        elif last is None:
            try:
                if conn.execute(f"SELECT 1 FROM {table} WHERE rowid = ?", (rowid,)).fetchone() is not None:
                    found_at = rowid  # there, but filtered out by `where`
            except sqlite3.DatabaseError:
                continue
    return rows


def _with_uid(conn: sqlite3.Connection, table: str, columns: str) -> str:
    """`columns` and the row's `uid`, read as NULL from a copy made before m006 (or whose schema is unreadable)."""
    try:
        names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    except sqlite3.DatabaseError:
        names = set()
    return f"{columns}, {'uid' if 'uid' in names else 'NULL'}"


def _last_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    """The table's largest rowid, when the pages leading to it (or `sqlite_sequence`) can be read."""
    for sql, params in ((f"SELECT max(rowid) FROM {table}", ()), ("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))):
        try:
            row = conn.execute(sql, params).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None and row[0] is not None:
            return int(row[0])
    return None


def salvage_capture(corrupt_path: str, target_path: str) -> dict[str, int]:
    """Copy readable capture rows from `corrupt_path` into `target_path`; returns counts inserted."""
    source = sqlite3.connect(f"file:{quote(corrupt_path)}?mode=ro", uri=True, timeout=10)
    try:
        # A truncated file is refused whole ("malformed") unless the schema checks are relaxed; the
        # connection is read-only, so nothing can be written through it.
        source.execute("PRAGMA writable_schema = ON")
        sessions = readable_rows(source, SESSIONS[0], _with_uid(source, *SESSIONS[:2]), SESSIONS[2])
        prompts = readable_rows(source, PROMPTS[0], _with_uid(source, *PROMPTS[:2]), PROMPTS[2])
        events = readable_rows(source, *EVENTS)
    finally:
        source.close()
    counts = {"sessions": 0, "prompts": 0, "events": 0}
    if not sessions:
        return counts
    target = db.connect(target_path)
    try:
        with db.transaction(target):
            new_id: dict[int, int] = {}
            for old_id, content_session_id, project, cwd, status, started_at, last_activity_at, uid in sessions:
                if not content_session_id or not project:
                    continue
                counts["sessions"] += target.execute(
                    "INSERT OR IGNORE INTO sessions (content_session_id, project, cwd, status, started_at, last_activity_at,"
                    " uid) VALUES (?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), "
                    "coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), ?)",
                    (content_session_id, project, cwd, status if status in ("active", "completed", "failed", "interrupted")
                     else "active", started_at, last_activity_at, uid),
                ).rowcount
                row = target.execute("SELECT id FROM sessions WHERE content_session_id = ?", (content_session_id,)).fetchone()
                if row is not None:  # None: its uid belongs to another session there (not ours to merge)
                    new_id[old_id] = row[0]
            for session_id, prompt_number, text, private, created_at, uid in prompts:
                if session_id in new_id and text is not None:
                    counts["prompts"] += target.execute(
                        "INSERT OR IGNORE INTO prompts (session_id, prompt_number, text, private, created_at, uid) "
                        "VALUES (?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), ?)",
                        (new_id[session_id], prompt_number, text, private or 0, created_at, uid),
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
                         "failed" if status == "failed" else "pending", attempts if status == "failed" else 0,
                         last_error, created_at),
                    ).rowcount
                except sqlite3.IntegrityError:  # a kind this schema does not know: not ours to invent
                    continue
    finally:
        target.close()
    return counts
