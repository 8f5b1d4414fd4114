"""The worker's share of "memory in use" (issue 30): which memories each session used, derived from
the captured events (`recall.use.derive`) off every hook's path, a batch at a time, within a second or
two of the event. `/health` shows `memory_use` {waiting, read, error}."""

from __future__ import annotations

from claude_mem.recall import use
from claude_mem.store import use as store_use
from claude_mem.worker.background import PollingTask
from claude_mem.worker.context import WorkerContext


class UseService(PollingTask):
    """Reads each captured event once and records the uses of memory it shows."""

    name = "memory-use"
    doing = "deriving the use of memory"
    startup_delay = 2.0  # see PollingTask

    def __init__(self) -> None:
        super().__init__()
        self.read = 0
        self.waiting: int | None = None

    def attach(self, ctx: WorkerContext) -> None:
        ctx.use_status = self.status

    def status(self) -> dict[str, object]:
        return {"waiting": self.waiting, "read": self.read, "error": self.last_error}

    def work_once(self) -> int:
        """One batch of events; how many were read."""
        conn = self.connect()
        try:
            done = use.derive(conn)
            self.read += done
            self.waiting = store_use.waiting(conn) if done else 0
            return done
        finally:
            conn.close()
