"""The forget repository: find what a forget names, delete it, and scrub its bytes everywhere.

Deleting a row is not enough for privacy: FTS5 keeps deleted terms in its segments until they
are merged, SQLite keeps freed pages until they are reused, and WAL mode keeps old page images in
the WAL. So after the delete (with `secure_delete` on) we `optimize` every FTS index, VACUUM and
truncate the WAL. Backups were all taken before the forget: each gets the same deletion and a
VACUUM, and one that cannot be rewritten is deleted.

A *target* names rows by what is the same in every copy of the database, never by row id:
- `{"observations": [[content_session_id, project, content_hash], ...], "event_keys": [...],
  "summaries": [uid, ...]}` — an observation is (its session's Claude Code id, its content hash), the
  hash being unique per session; a manual note (no session, `content_session_id` None) is (project,
  content hash); the summaries of the turns it came from (they restate it) go by their uid;
- `{"session": content_session_id}`;
- `{"project": project_key}`.
"""

import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from claude_mem import paths
from claude_mem.store import auto_memory
from claude_mem.store.migrations import FTS_COLUMNS
from claude_mem.store.transaction import transaction

# What to forget: {"observations": [(id or None, query or None, project or None), …]}, {"session": id}
# or {"project": key}, as `recall.forget` resolved it.
Target = dict[str, Any]

_COUNTED = ("prompts", "pending_events", "summaries", "observations")


def find_session(conn: sqlite3.Connection, session: str) -> tuple[int, str] | None:
    """(row id, content_session_id) of a session named by its Claude Code id, or by its row id."""
    row = conn.execute(
        "SELECT id, content_session_id FROM sessions WHERE content_session_id = ?", (session,)
    ).fetchone()
    if row is None and session.isdigit() and int(session) < 2**63:
        row = conn.execute("SELECT id, content_session_id FROM sessions WHERE id = ?", (int(session),)).fetchone()
    return (int(row[0]), str(row[1])) if row else None


def observation_targets(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[str | None]]:
    """Row id → [content_session_id (None for a manual note), project, content_hash] of the observations found."""
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT o.id, s.content_session_id, o.project, o.content_hash FROM observations o"
        f" LEFT JOIN sessions s ON s.id = o.session_id WHERE o.id IN ({marks})",
        list(ids),
    ).fetchall()
    return {int(row[0]): [row[1], row[2], row[3]] for row in rows}


def orphan_event_keys(conn: sqlite3.Connection, ids: Sequence[int]) -> list[str]:
    """Keys of the captured events that only these observations came from (they go with them)."""
    marks = ", ".join("?" for _ in ids)
    return [row[0] for row in conn.execute(
        "SELECT DISTINCT e.event_key FROM observation_sources src JOIN pending_events e ON e.id = src.event_id"
        f" WHERE src.observation_id IN ({marks}) AND NOT EXISTS (SELECT 1 FROM observation_sources other"
        f" WHERE other.event_id = src.event_id AND other.observation_id NOT IN ({marks}))",
        (*ids, *ids),
    )]


def turn_summaries(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
    """Row id → uid of the summaries of the turns these observations came from: same session, and the
    observation's prompt number, a prompt number of an event it came from, or a summary made from such
    an event. A manual note (no session) has none."""
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT DISTINCT s.id, s.uid FROM observations o JOIN summaries s ON s.session_id = o.session_id"
        f" WHERE o.id IN ({marks}) AND s.uid IS NOT NULL AND (s.prompt_number = o.prompt_number"
        " OR s.prompt_number IN (SELECT e.prompt_number FROM observation_sources src"
        "  JOIN pending_events e ON e.id = src.event_id WHERE src.observation_id = o.id)"
        " OR s.event_id IN (SELECT src.event_id FROM observation_sources src WHERE src.observation_id = o.id))"
        " ORDER BY s.id",
        list(ids),
    ).fetchall()
    return {int(row[0]): str(row[1]) for row in rows}


def session_counts(conn: sqlite3.Connection, session_id: int) -> dict[str, int]:
    """Rows that forgetting the session removes, per table."""
    counts = {name: int(conn.execute(f"SELECT COUNT(*) FROM {name} WHERE session_id = ?", (session_id,)).fetchone()[0])
              for name in _COUNTED}
    return {**counts, "sessions": 1}


def project_counts(conn: sqlite3.Connection, project: str) -> dict[str, int]:
    """Rows that forgetting the project removes, per table (its manual notes among the observations)."""
    where = "session_id IN (SELECT id FROM sessions WHERE project = ?)"
    counts = {name: int(conn.execute(f"SELECT COUNT(*) FROM {name} WHERE {where}", (project,)).fetchone()[0])
              for name in _COUNTED}
    counts["observations"] += int(conn.execute(
        "SELECT COUNT(*) FROM observations WHERE project = ? AND session_id IS NULL", (project,)
    ).fetchone()[0])
    counts["sessions"] = int(conn.execute("SELECT COUNT(*) FROM sessions WHERE project = ?", (project,)).fetchone()[0])
    return counts


def _observation_where(content_session_id: str | None, project: str, digest: str) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause naming one observation of a target (see the module docstring)."""
    if content_session_id is None:
        return "session_id IS NULL AND project = ? AND content_hash = ?", (project, digest)
    return ("content_hash = ? AND session_id = (SELECT id FROM sessions WHERE content_session_id = ?)",
            (digest, content_session_id))


def removed_ids(conn: sqlite3.Connection, target: Target) -> dict[str, list[Any]]:
    """What deleting `target` removes from this database, by row id (sessions by Claude Code id), for
    telling open viewers: `{observations, summaries, prompts, sessions}`. Read before the delete."""
    def ids(sql: str, args: Sequence[object]) -> list[Any]:
        return [row[0] for row in conn.execute(sql, args)]

    if "observations" in target:
        found: list[int] = []
        for observation in target["observations"]:
            where, where_args = _observation_where(*observation)
            found += ids(f"SELECT id FROM observations WHERE {where}", where_args)
        summaries: list[int] = []
        for uid in target.get("summaries", ()):
            summaries += ids("SELECT id FROM summaries WHERE uid = ?", (uid,))
        return {"observations": sorted(found), "summaries": sorted(summaries), "prompts": [], "sessions": []}
    column, value = ("content_session_id", target["session"]) if "session" in target else ("project", target["project"])
    sessions = f"SELECT id FROM sessions WHERE {column} = ?"
    # A project's rows outside its sessions (its manual notes) go with it; a session has none.
    own = " OR project = ?" if column == "project" else ""
    both = (value, value) if own else (value,)
    return {
        "observations": ids(f"SELECT id FROM observations WHERE session_id IN ({sessions}){own} ORDER BY id", both),
        "summaries": ids(f"SELECT id FROM summaries WHERE session_id IN ({sessions}){own} ORDER BY id", both),
        "prompts": ids(f"SELECT id FROM prompts WHERE session_id IN ({sessions}) ORDER BY id", (value,)),
        "sessions": ids(f"SELECT content_session_id FROM sessions WHERE {column} = ? ORDER BY id", (value,)),
    }


def delete(conn: sqlite3.Connection, target: Target) -> None:
    """Delete what `target` names, inside the caller's transaction (foreign keys cascade the rest)."""
    if "observations" in target:
        for observation in target["observations"]:
            where, args = _observation_where(*observation)
            conn.execute(f"DELETE FROM observations WHERE {where}", args)
        for uid in target.get("summaries", ()):
            conn.execute("DELETE FROM summaries WHERE uid = ?", (uid,))
        for key in target["event_keys"]:
            conn.execute("DELETE FROM pending_events WHERE event_key = ?", (key,))
    elif "session" in target:
        conn.execute("DELETE FROM sessions WHERE content_session_id = ?", (target["session"],))
    else:
        project = target["project"]
        conn.execute("DELETE FROM observations WHERE project = ?", (project,))
        conn.execute("DELETE FROM summaries WHERE project = ?", (project,))
        conn.execute("DELETE FROM sessions WHERE project = ?", (project,))
        auto_memory.forget_project(conn, project)  # our copy of Claude Code's notes of it (issue 30)


def scrub(conn: sqlite3.Connection) -> None:
    """Make deleted text unrecoverable: merge FTS segments, rebuild the file, empty the WAL."""
    conn.execute("PRAGMA secure_delete = ON")
    for table in FTS_COLUMNS:
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def apply(conn: sqlite3.Connection, target: Target) -> None:
    """Delete in one transaction, then scrub."""
    with transaction(conn):
        delete(conn, target)
    scrub(conn)


def rewrite_backups(data_dir: str, target: Target) -> dict[str, list[str]]:
    """Apply the same forget to every backup; delete any backup that cannot be rewritten."""
    report: dict[str, list[str]] = {"rewritten": [], "pruned": []}
    for path in paths.list_backups(data_dir):
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=10)
            try:
                conn.execute("PRAGMA foreign_keys = ON")
                apply(conn, target)
                conn.execute("PRAGMA journal_mode = DELETE")
            finally:
                conn.close()
            report["rewritten"].append(path)
        except sqlite3.Error:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(path + suffix)
                except FileNotFoundError:
                    pass
            report["pruned"].append(path)
    return report
