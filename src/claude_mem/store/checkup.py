"""A look at a database that leaves no trace, for `claude-mem doctor`.

Opening a WAL database with `mode=ro` still creates its `-wal` and `-shm` files; a database nobody
has open has neither, so it is opened `immutable` (nothing created, nothing written). The full-text
indexes' integrity check is an INSERT that a read-only connection refuses, so it runs on a copy in
memory (bounded by size: past it the check is left to `claude-mem repair`, which may write).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from urllib.parse import quote

from claude_mem.store import caught_late, integrity, queue
from claude_mem.store.migrations import SCHEMA_VERSION

# Above this size the indexes are not copied into memory to be checked.
FTS_CHECK_MAX_BYTES = 512 * 1024 * 1024


@dataclass
class DatabaseReport:
    """What a read-only look found. `problem` is set when the file is damaged or not ours."""

    path: str
    exists: bool
    size: int = 0
    problem: str = ""
    schema_version: int = 0
    latest_version: int = SCHEMA_VERSION
    broken_indexes: list[str] = field(default_factory=list)
    indexes_checked: bool = False
    queue: dict[str, int] = field(default_factory=dict)
    caught_late: dict[str, object] = field(default_factory=caught_late.nothing_caught)


def open_untouched(path: str) -> sqlite3.Connection:
    """A read-only connection that creates no file beside `path` when nobody has it open."""
    in_use = os.path.exists(path + "-wal")
    mode = "mode=ro" if in_use else "mode=ro&immutable=1"
    conn = sqlite3.connect(f"file:{quote(path)}?{mode}", uri=True, timeout=5, isolation_level=None,
                           check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    if in_use:
        try:
            conn.execute("PRAGMA schema_version").fetchone()  # the -shm opens here
        except sqlite3.OperationalError:  # a full disk or a read-only dir: read the file as it is
            conn.close()
            conn = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True, timeout=5,
                                   isolation_level=None, check_same_thread=False)
    return conn


def inspect_database(path: str, fts_limit: int = FTS_CHECK_MAX_BYTES) -> DatabaseReport:
    """quick_check, schema version, the full-text indexes, the queue counts and the secrets caught
    late, without writing."""
    if not os.path.exists(path):
        return DatabaseReport(path, exists=False)
    report = DatabaseReport(path, exists=True, size=os.path.getsize(path))
    try:
        conn = open_untouched(path)
    except sqlite3.Error as exc:
        report.problem = f"cannot open: {exc}"
        return report
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if [tuple(row) for row in rows] != [("ok",)]:
            report.problem = "quick_check: " + "; ".join(str(row[0]) for row in rows[:5])
            return report
        report.schema_version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "pending_events" not in tables:
            report.problem = "not a claude-mem database (no pending_events table)"
            return report
        report.queue = queue.queue_counts(conn)
        report.caught_late = caught_late.report(conn)
        if report.size <= fts_limit:
            report.broken_indexes = _broken_indexes_of_copy(conn, tables)
            report.indexes_checked = True
    except sqlite3.Error as exc:
        report.problem = f"unreadable: {exc}"
    finally:
        conn.close()
    return report


def _broken_indexes_of_copy(conn: sqlite3.Connection, tables: set[str]) -> list[str]:
    """The indexes whose FTS5 integrity check fails, checked on a copy in memory (the check is an
    INSERT); unlike `integrity.broken_indexes`, nothing is logged: doctor reports it."""
    copy = sqlite3.connect(":memory:", isolation_level=None)
    broken = []
    try:
        conn.backup(copy)
        for index in (name for name in integrity.INDEXES if name in tables):
            try:
                copy.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")
            except (sqlite3.DatabaseError, MemoryError):  # a garbled size field makes FTS5 ask for gigabytes
                broken.append(index)
    finally:
        copy.close()
    return broken


def count_rows(path: str, table: str) -> int | None:
    """Rows of `table` in another database (the original claude-mem's), read without a trace; None
    when it cannot be read."""
    if not table.isidentifier() or not os.path.exists(path):
        return None
    try:
        conn = open_untouched(path)
    except sqlite3.Error:
        return None
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()
