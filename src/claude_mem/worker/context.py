"""What every service and route of the worker shares: settings, paths, the event bus."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from claude_mem import __version__, paths, store
from claude_mem.domain import utc_stamp
from claude_mem.store import Store
from claude_mem.worker.bus import EventBus


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
    # The observer service sets this to report its provider's health in /health (see health.py).
    provider_health: Callable[[], Awaitable[dict[str, object]]] | None = None
    # The observer service sets this to the name of the provider it runs (`auto` resolved).
    provider_name: str = ""
    # The daemon sets this: begins a graceful shutdown (None in process, as under TestClient).
    shutdown: Callable[[], None] | None = None
    # Set when a restart was asked for: the port the worker that replaces this one binds.
    restart_port: int | None = None

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
