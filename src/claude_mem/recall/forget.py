"""`forget`: remove observations, a session or a project — rows, FTS entries and their bytes.

Deleting a row is not enough for privacy: FTS5 keeps deleted terms in its segments until they
are merged, SQLite keeps freed pages until they are reused, and WAL mode keeps old page images in
the WAL. So after the delete (with `secure_delete` on) we `optimize` every FTS index, VACUUM and
truncate the WAL. Backups in `<data_dir>/backups/` were all taken before the forget: each gets
the same deletion and a VACUUM, and one that cannot be rewritten is deleted.
"""

import os
import sqlite3
from collections.abc import Iterable

from claude_mem import paths
from claude_mem.recall.common import RecallError, UnknownRecord
from claude_mem.store import db
from claude_mem.store.migrations import FTS_COLUMNS


def _session_row(conn: sqlite3.Connection, session: str) -> tuple[int, str]:
    row = conn.execute(
        "SELECT id, content_session_id FROM sessions WHERE content_session_id = ?", (session,)
    ).fetchone()
    if row is None and session.isdigit():
        row = conn.execute("SELECT id, content_session_id FROM sessions WHERE id = ?", (int(session),)).fetchone()
    if row is None:
        raise UnknownRecord(f"unknown session {session!r}")
    return row[0], row[1]


def plan(
    conn: sqlite3.Connection, ids: Iterable[int] = (), session: str | None = None, project: str | None = None
) -> dict:
    """What a forget would remove: a target description plus counts; RecallError for unknown targets.

    The target is stable across copies of the database (content hashes, session ids, project keys),
    so the same plan can be applied to every backup.
    """
    wanted = sorted({int(i) for i in ids})
    if sum(bool(x) for x in (wanted, session, project)) != 1:
        raise RecallError("say what to forget: observation ids, or --session, or --project (one of them)")
    if wanted:
        marks = ", ".join("?" for _ in wanted)
        rows = conn.execute(
            f"SELECT id, project, content_hash, session_id FROM observations WHERE id IN ({marks})", wanted
        ).fetchall()
        missing = sorted(set(wanted) - {row[0] for row in rows})
        if missing:
            raise UnknownRecord(f"unknown observation id(s): {', '.join(f'#{i}' for i in missing)}")
        events = conn.execute(
            f"SELECT DISTINCT e.event_key FROM observation_sources src JOIN pending_events e ON e.id = src.event_id"
            f" WHERE src.observation_id IN ({marks}) AND NOT EXISTS (SELECT 1 FROM observation_sources other"
            f" WHERE other.event_id = src.event_id AND other.observation_id NOT IN ({marks}))",
            (*wanted, *wanted),
        ).fetchall()
        return {
            "target": {"observations": [[row[1], row[2]] for row in rows], "event_keys": [e[0] for e in events]},
            "counts": {"observations": len(rows), "events": len(events)},
            "describe": f"{len(rows)} observation(s) ({', '.join(f'#{i}' for i in wanted)})",
        }
    if session:
        session_id, content_id = _session_row(conn, session)
        target = {"session": content_id}
        where, args = "session_id = ?", (session_id,)
        describe = f"session {content_id}"
    else:
        count = conn.execute(
            "SELECT (SELECT COUNT(*) FROM sessions WHERE project = ?) + (SELECT COUNT(*) FROM observations WHERE project = ?)",
            (project, project),
        ).fetchone()[0]
        if not count:
            raise RecallError(f"nothing stored for project {project!r}")
        target = {"project": project}
        where, args = "session_id IN (SELECT id FROM sessions WHERE project = ?)", (project,)
        describe = f"project {project}"
    counts = {
        name: conn.execute(f"SELECT COUNT(*) FROM {name} WHERE {where}", args).fetchone()[0]
        for name in ("prompts", "pending_events", "summaries", "observations")
    }
    if project:
        counts["observations"] += conn.execute(
            "SELECT COUNT(*) FROM observations WHERE project = ? AND session_id IS NULL", (project,)
        ).fetchone()[0]
        counts["sessions"] = conn.execute("SELECT COUNT(*) FROM sessions WHERE project = ?", (project,)).fetchone()[0]
    else:
        counts["sessions"] = 1
    return {"target": target, "counts": counts, "describe": describe}


def _delete(conn: sqlite3.Connection, target: dict) -> None:
    """Apply a plan's target inside the caller's transaction (foreign keys cascade the rest)."""
    if "observations" in target:
        for project, digest in target["observations"]:
            conn.execute("DELETE FROM observations WHERE project = ? AND content_hash = ?", (project, digest))
        for key in target["event_keys"]:
            conn.execute("DELETE FROM pending_events WHERE event_key = ?", (key,))
    elif "session" in target:
        conn.execute("DELETE FROM sessions WHERE content_session_id = ?", (target["session"],))
    else:
        project = target["project"]
        conn.execute("DELETE FROM observations WHERE project = ?", (project,))
        conn.execute("DELETE FROM summaries WHERE project = ?", (project,))
        conn.execute("DELETE FROM sessions WHERE project = ?", (project,))


def scrub(conn: sqlite3.Connection) -> None:
    """Make deleted text unrecoverable: merge FTS segments, rebuild the file, empty the WAL."""
    conn.execute("PRAGMA secure_delete = ON")
    for table in FTS_COLUMNS:
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def apply(conn: sqlite3.Connection, target: dict) -> None:
    """Delete in one transaction, then scrub."""
    with db.transaction(conn):
        _delete(conn, target)
    scrub(conn)


def rewrite_backups(data_dir: str, target: dict) -> dict[str, list[str]]:
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


def forget(
    conn: sqlite3.Connection, data_dir: str, ids: Iterable[int] = (), session: str | None = None,
    project: str | None = None,
) -> dict:
    """Plan, delete, scrub, then fix the backups; returns the plan's counts and the backup report."""
    planned = plan(conn, ids, session, project)
    apply(conn, planned["target"])
    return {"forgot": planned["describe"], "counts": planned["counts"], "backups": rewrite_backups(data_dir, planned["target"])}
