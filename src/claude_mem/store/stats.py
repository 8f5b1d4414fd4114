"""Counts of what the store holds, for `status`, `/health` and `/api/stats`."""

import os
import sqlite3

from claude_mem.domain import EVENT_STATUSES
from claude_mem.store import caught_late, db
from claude_mem.store.queue import queue_counts


def store_counts(conn: sqlite3.Connection) -> dict[str, object]:
    """Rows per table; events broken down by status."""
    def scalar(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    return {
        "sessions": scalar("SELECT COUNT(*) FROM sessions"),
        "prompts": scalar("SELECT COUNT(*) FROM prompts"),
        "events": queue_counts(conn),
        "observations": scalar("SELECT COUNT(*) FROM observations"),
        "summaries": scalar("SELECT COUNT(*) FROM summaries"),
    }


def observations_by_type(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT type, COUNT(*) FROM observations GROUP BY type").fetchall())


def project_count(conn: sqlite3.Connection) -> int:
    """Projects with at least one captured session (the catalog's counts, m015)."""
    return int(conn.execute("SELECT COUNT(*) FROM projects WHERE sessions > 0").fetchone()[0])


def empty_counts() -> dict[str, object]:
    return {
        "sessions": 0, "prompts": 0, "events": dict.fromkeys(EVENT_STATUSES, 0),
        "observations": 0, "summaries": 0,
    }


def database_bytes(path: str) -> int:
    """Size on disk of the database with its WAL and shared-memory files."""
    return sum(os.path.getsize(path + suffix) for suffix in ("", "-wal", "-shm") if os.path.exists(path + suffix))


def store_report(data_dir: str) -> dict[str, object]:
    """What `status` shows about the store, without creating anything."""
    path = db.db_path(data_dir)
    report: dict[str, object] = {
        "data_dir": data_dir,
        "database": path,
        "database_exists": os.path.exists(path),
        "database_bytes": database_bytes(path),
        "schema_version": None,
        "counts": empty_counts(),
    }
    conn = db.connect_readonly(path)
    if conn is None:
        return report
    try:
        version = report["schema_version"] = db.schema_version(conn)
        if version >= 1:
            report["counts"] = store_counts(conn)
    finally:
        conn.close()
    return report


def privacy_report(data_dir: str) -> dict[str, object]:
    """What the worker's second redaction pass caught (`caught_late.report`), without creating anything."""
    conn = db.connect_readonly(db.db_path(data_dir))
    if conn is None:
        return caught_late.nothing_caught()
    try:
        return caught_late.report(conn)
    finally:
        conn.close()
