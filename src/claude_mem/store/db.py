"""The one way to open the database. Stdlib only: hooks open it on every call.

WAL, foreign keys, `synchronous=NORMAL` and `secure_delete` are set here for everyone; the caller
chooses `busy_timeout` (short for hooks, long for the worker). The schema is brought up to date on
open (one PRAGMA when it already is).
"""

import os
import sqlite3

from claude_mem import paths
from claude_mem.store.migrations import SCHEMA_VERSION
from claude_mem.store.migrations import migrate as migrate_schema
from claude_mem.store.transaction import transaction

__all__ = ["SCHEMA_VERSION", "connect", "connect_readonly", "db_path", "schema_version", "transaction"]

HOOK_BUSY_MS = 250
WORKER_BUSY_MS = 10_000

db_path = paths.db_path


def connect(path: str, busy_timeout_ms: int = WORKER_BUSY_MS, migrate: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) the database at `path`, configured and migrated.

    The connection is in autocommit mode: write transactions are opened explicitly
    (`BEGIN IMMEDIATE`), so a writer takes its lock up front instead of failing on upgrade.
    """
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")
        if migrate and conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            migrate_schema(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_readonly(path: str, busy_timeout_ms: int = WORKER_BUSY_MS) -> sqlite3.Connection | None:
    """Open an existing database for reading only; None when it does not exist yet."""
    if not os.path.exists(path):
        return None
    from urllib.parse import quote

    conn = sqlite3.connect(
        f"file:{quote(path)}?mode=ro", uri=True, timeout=busy_timeout_ms / 1000, isolation_level=None,
        check_same_thread=False,
    )
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]
