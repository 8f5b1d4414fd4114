"""What every service and route of the worker shares: settings, paths, the event bus."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from claude_mem import __version__, paths, store
from claude_mem.domain import utc_stamp
from claude_mem.store import Store
from claude_mem.worker.bus import EventBus

# Idle read connections a worker keeps (requests beyond it open and close their own).
READERS = 8


class Readers:
    """Read-only connections kept open between requests (issue 27): opening one and reading the
    schema on its first query cost more than a keyword search. A connection is handed to one
    thread at a time; one whose database file was replaced since it opened (a restore, a repair)
    is closed rather than reused. Schema changes need nothing: SQLite re-prepares on its own.
    """

    def __init__(self, data_dir: str, keep: int = READERS) -> None:
        self.data_dir, self.keep = data_dir, keep
        self._idle: list[tuple[tuple[int, int], Store]] = []
        self._lock = threading.Lock()

    def _identity(self) -> tuple[int, int] | None:
        try:
            found = os.stat(paths.db_path(self.data_dir))
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def borrow(self) -> tuple[tuple[int, int] | None, Store]:
        """(the database file's identity, a read-only connection to it). With no database yet, a
        connection that creates it (never kept)."""
        identity = self._identity()
        with self._lock:
            while self._idle:
                kept, conn = self._idle.pop()
                if kept == identity:
                    return identity, conn
                conn.close()
        try:
            return identity, store.open(self.data_dir, readonly=True)
        except store.NoDatabase:
            return None, store.open(self.data_dir)

    def give_back(self, identity: tuple[int, int] | None, conn: Store) -> None:
        """Keep `conn` for the next request, or close it (the pool full, a transaction left open, the file gone)."""
        if identity is not None and not conn.in_transaction and identity == self._identity():
            with self._lock:
                if len(self._idle) < self.keep:
                    self._idle.append((identity, conn))
                    return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for _identity, conn in idle:
            conn.close()


@dataclass
class WorkerContext:
    """One per worker process; created before the services start, read by every route."""

    settings: dict[str, Any]
    data_dir: str
    bus: EventBus = field(default_factory=EventBus)
    version: str = __version__
    pid: int = field(default_factory=os.getpid)
    port: int = 0
    started_at: float = field(default_factory=time.time)
    recovery: dict[str, object] | None = None
    service_errors: dict[str, str] = field(default_factory=dict)
    # Repairs the store needed while this worker ran (a search index rebuilt), shown by /health.
    store_notes: list[str] = field(default_factory=list)
    # The embedding service sets this: {model, available, reason, embedded, total} for /health.
    vector_status: Callable[[], dict[str, object]] | None = None
    # The team service sets this: replication state for /health and `team status` (DESIGN §12).
    team_status: Callable[[], dict[str, object]] | None = None
    # The context-index service's {waiting, indexed, error} (issue 29: rows stored before m017).
    index_status: Callable[[], dict[str, object]] | None = None
    # The memory-use service's {waiting, read, error} (issue 30: uses derived from the captured events).
    use_status: Callable[[], dict[str, object]] | None = None
    # The failure service's {waiting, read, error} (issue 31: successes linked to the failures they resolve).
    failures_status: Callable[[], dict[str, object]] | None = None
    # The auto memory service's {projects, files, synced, error} (issue 30: Claude Code's notes indexed).
    auto_memory_status: Callable[[], dict[str, object]] | None = None
    # The observer service sets this to report its provider's health in /health (see health.py).
    provider_health: Callable[[], Awaitable[dict[str, object]]] | None = None
    # The observer service sets this to the name of the provider it runs (`auto` resolved).
    provider_name: str = ""
    # The daemon sets this: begins a graceful shutdown (None in process, as under TestClient).
    shutdown: Callable[[], None] | None = None
    # Set when a restart was asked for: the port the worker that replaces this one binds.
    restart_port: int | None = None
    # The read-only connections routes read through (`routes_common.reading`).
    readers: Readers = field(init=False)

    def __post_init__(self) -> None:
        self.readers = Readers(self.data_dir)

    @property
    def db_path(self) -> str:
        return paths.db_path(self.data_dir)

    @property
    def started(self) -> str:
        """When the worker started, as worker.json and /health say it."""
        return utc_stamp(self.started_at)

    @property
    def uptime(self) -> float:
        return max(0.0, time.time() - self.started_at)

    def connect(self) -> Store:
        """A worker connection: migrated, WAL, the long busy timeout (hooks use a short one)."""
        return store.open(self.data_dir, busy_timeout_ms=store.WORKER_BUSY_MS)

    def path(self, *parts: str) -> str:
        return os.path.join(self.data_dir, *parts)
