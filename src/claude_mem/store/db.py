"""The one way to open the database. Stdlib only: hooks open it on every call.

WAL, foreign keys, `synchronous=NORMAL` and `secure_delete` are set here for everyone; the caller
chooses `busy_timeout` (short for hooks, long for the worker). The schema is brought up to date on
open; the migrations module is imported only when the database is behind.
"""

import os
import sqlite3

from claude_mem import paths

HOOK_BUSY_MS = 250
WORKER_BUSY_MS = 10_000

# Number of migrations in store/migrations.py; kept here so an up-to-date database costs one PRAGMA.
SCHEMA_VERSION = 2


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
            from claude_mem.store.migrations import migrate as apply_migrations

            apply_migrations(conn)
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


class transaction:
    """`with transaction(conn):` runs the block in `BEGIN IMMEDIATE` … `COMMIT`, or rolls it back.

    IMMEDIATE takes the write lock up front (waiting up to the connection's busy timeout), so a
    writer never fails half-way on a lock upgrade. Inside an open transaction it nests as a
    SAVEPOINT: the inner block's failure rolls back only its own writes. A class, not
    `contextlib`: the hooks use it too.
    """

    __slots__ = ("conn", "savepoint")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.savepoint = ""

    def __enter__(self) -> sqlite3.Connection:
        if self.conn.in_transaction:
            self.savepoint = f"nested_{id(self):x}"
            self.conn.execute(f"SAVEPOINT {self.savepoint}")
        else:
            self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if self.savepoint:
            if exc_type is None:
                self.conn.execute(f"RELEASE {self.savepoint}")
            elif self.conn.in_transaction:
                self.conn.execute(f"ROLLBACK TO {self.savepoint}")
                self.conn.execute(f"RELEASE {self.savepoint}")
            return
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]
