"""Cheap probes of the database for `/health` (issue 33, item 5): can a writer get the lock now?

`write_lock` opens its own connection to the existing file (never creating or migrating it), asks for
the write lock with a short busy timeout and gives it back at once (`BEGIN IMMEDIATE; ROLLBACK`:
nothing is written). In WAL mode readers are never blocked, so a reader-side probe would say "ok"
while every writer — hooks, the observer — waits and fails with `database is locked`.
"""

from __future__ import annotations

import os
import sqlite3

from claude_mem.store.db import db_path, file_uri

PROBE_BUSY_MS = 250


def is_lock_error(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database table is locked" / busy errors."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def write_lock(data_dir: str, busy_timeout_ms: int = PROBE_BUSY_MS) -> str | None:
    """None when a writer could take the lock of `data_dir`'s database within `busy_timeout_ms`
    (or there is no database yet); else SQLite's reason ("database is locked")."""
    path = db_path(data_dir)
    if not os.path.exists(path):
        return None
    conn = sqlite3.connect(f"{file_uri(path)}?mode=rw", uri=True, timeout=busy_timeout_ms / 1000,
                           isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return None
    except sqlite3.OperationalError as exc:
        if is_lock_error(exc):
            return str(exc)
        raise
    finally:
        conn.close()
