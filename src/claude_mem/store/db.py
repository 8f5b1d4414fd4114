"""The one way to open the database: `store.open(data_dir)` hands out a `Store`. Stdlib only: hooks
open it on every call.

WAL, foreign keys, `synchronous=NORMAL` and `secure_delete` are set here for everyone; the caller
chooses `busy_timeout` (short for hooks, long for the worker). The schema is brought up to date on
open (one PRAGMA when it already is).
"""

from __future__ import annotations

# `_sqlite3` is the driver `sqlite3` re-exports (the same connect, Connection and errors); importing the
# `sqlite3` package on top adds `datetime`, `collections` and date adapters: ~2 ms of every hook.
import _sqlite3 as sqlite3
import os

from claude_mem import paths
from claude_mem.store.migrations import SCHEMA_VERSION
from claude_mem.store.migrations import migrate as migrate_schema
from claude_mem.store.transaction import transaction

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Callable
    from typing import Literal

__all__ = [
    "SCHEMA_VERSION", "DatabaseError", "NewerSchema", "NoDatabase", "Store", "connect", "connect_readonly", "db_path", "open",
    "schema_version", "transaction",
]

HOOK_BUSY_MS = 250
_NOTADB = 26  # SQLITE_NOTADB: "file is not a database"
_restorer: Callable[[str], object] | None = None  # `set_restorer`
_NO_SHM = (8, 10, 13, 14)  # SQLITE_READONLY, _IOERR, _FULL, _CANTOPEN: what a WAL reader meets without its -shm
WORKER_BUSY_MS = 10_000

db_path = paths.db_path

# What a failed query raises, named by the store so no module above it names sqlite3.
DatabaseError = sqlite3.Error


class NoDatabase(DatabaseError):
    """A read-only open of a data dir that has no database yet."""


class NewerSchema(DatabaseError):
    """The database was written by a newer claude-mem: this build opens it for reading only, never writes."""

    condition = "newer-schema"  # `capture.trouble.classify`: the hooks keep the event in the spool

    def __init__(self, found: int, known: int = SCHEMA_VERSION) -> None:
        from claude_mem.capture.trouble import newer_schema_message

        super().__init__(newer_schema_message(found, known))
        self.found, self.known = found, known


class Store(sqlite3.Connection):
    """An open database: the handle the CLI, MCP server, worker and hooks hold and pass to the store's
    repositories (`memory.observations_by_id(store, ids)`). Nothing above `store/` runs SQL on it.

    `with store.open(data_dir) as db:` closes it at the end of the block (a plain sqlite3 connection
    would only commit); writes are grouped with `transaction(db)`.
    """

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False


def open(  # noqa: A001 - `store.open(data_dir)` reads as the one way in
    data_dir: str | None = None, *, path: str | None = None, readonly: bool = False,
    busy_timeout_ms: int = WORKER_BUSY_MS, migrate: bool = True,
) -> Store:
    """The database of `data_dir` (or the file at `path`), configured and, unless `readonly`, created
    and migrated. Read-only opens never create or change anything and raise `NoDatabase` when there is
    no database yet."""
    if path is None:
        if data_dir is None:
            raise TypeError("store.open needs a data dir or a path")
        path = db_path(data_dir)
    if readonly:
        conn = connect_readonly(path, busy_timeout_ms)
        if conn is None:
            raise NoDatabase(f"no database at {path}")
        return conn
    return connect(path, busy_timeout_ms, migrate)


def connect(path: str, busy_timeout_ms: int = WORKER_BUSY_MS, migrate: bool = True) -> Store:
    """Open (creating if needed) the database at `path`, configured and migrated.

    The connection is in autocommit mode: write transactions are opened explicitly
    (`BEGIN IMMEDIATE`), so a writer takes its lock up front instead of failing on upgrade.
    """
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    live = os.path.basename(path) == paths.DB_FILENAME and _restorer is not None
    if live and _lost(path):
        _restore(directory)
    try:
        return _connect(path, busy_timeout_ms, migrate)
    except sqlite3.DatabaseError as exc:
        # Not a database at all (a damaged header): restore before anything writes, then try once more.
        if not live or getattr(exc, "sqlite_errorcode", 0) & 0xFF != _NOTADB or not paths.list_backups(directory) \
                or not _restore(directory):
            raise  # without a backup the worker's recovery salvages what it can (the hook spools meanwhile)
    return _connect(path, busy_timeout_ms, migrate)


def conditions(data_dir: str) -> list[dict[str, object]]:
    """What keeps the store from working normally, for `/health`, `status` and `doctor` (no database opened):
    `capture.trouble.store_conditions` — disk-full, read-only, newer-schema (against this build's schema),
    recovered — each `{state, reason, since, waiting}`."""
    from claude_mem.capture.trouble import store_conditions

    return store_conditions(data_dir, SCHEMA_VERSION, file_schema(db_path(data_dir)))


def file_schema(path: str) -> int | None:
    """The schema version of the database at `path` (`PRAGMA user_version`), None when it cannot be read.

    Through SQLite, never a plain `open()` of the file: closing any other descriptor of a database drops
    every POSIX lock this process holds on it — a worker's connections would lose theirs, and the next
    process to close its own would take itself for the last one and delete the `-shm` under them (disk
    I/O errors). SQLite keeps one lock record per file within a process and closes its descriptors late."""
    if not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(f"{file_uri(path)}?mode=ro", uri=True, timeout=0.25)
    except sqlite3.Error:
        return None
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def set_restorer(restorer: Callable[[str], object]) -> None:
    """What `connect` calls with the data dir, before anything writes, when the database is lost (missing or
    0 bytes beside backups) or not a database: `store.restore_first.restore_first`, set by `store/__init__`
    (it needs `backup`, which opens databases through this module)."""
    global _restorer
    _restorer = restorer


def _restore(data_dir: str) -> bool:
    return _restorer is not None and _restorer(data_dir) is not None


def _connect(path: str, busy_timeout_ms: int, migrate: bool) -> Store:
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False,
                           factory=Store)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise NewerSchema(version)  # before anything is written, even the journal mode
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")
        if migrate and version < SCHEMA_VERSION:
            if "m017_search_context" in migrate_schema(conn):
                from claude_mem.store import context_field  # once, at the upgrade: not on every hook's path

                context_field.fill_small(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _lost(path: str) -> bool:
    """One `stat` on every open: the database is missing or empty (0 bytes) while backups exist."""
    try:
        if os.stat(path).st_size > 0:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return bool(paths.list_backups(os.path.dirname(path)))


def file_uri(path: str) -> str:
    """SQLite's `file:` URI of `path`: only `%`, `?` and `#` need escaping there (SQLite takes every other
    byte as written), and an absolute path gets an empty authority so that one starting `//` stays a path.
    (`urllib.parse.quote` would cost a hook ~5 ms of imports.)"""
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file://{escaped}" if escaped.startswith("/") else f"file:{escaped}"


def connect_readonly(path: str, busy_timeout_ms: int = WORKER_BUSY_MS) -> Store | None:
    """Open an existing database for reading only; None when it does not exist yet."""
    if not os.path.exists(path):
        return None
    conn = _readonly(path, busy_timeout_ms, "mode=ro")
    try:
        conn.execute("PRAGMA schema_version").fetchone()  # a WAL database opens its -shm here
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _NO_SHM:
            raise
    # A read-only directory or a full disk: no -shm can be made or grown. Read the file as it is
    # (`immutable`): what only the WAL holds is not seen, but the session still gets its memory.
    return _readonly(path, busy_timeout_ms, "immutable=1")


def _readonly(path: str, busy_timeout_ms: int, mode: str) -> Store:
    conn = sqlite3.connect(f"{file_uri(path)}?{mode}", uri=True, timeout=busy_timeout_ms / 1000,
                           isolation_level=None, check_same_thread=False, factory=Store)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    except BaseException:
        conn.close()
        raise
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])
