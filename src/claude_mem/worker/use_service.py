"""The worker's share of "memory in use" (issue 30): which memories each session used, derived from
the captured events (`recall.use.derive`) off every hook's path, a batch at a time, within a second or
two of the event. `/health` shows `memory_use` {waiting, read, error}."""

from __future__ import annotations

import asyncio
import logging

from claude_mem.recall import use
from claude_mem.store import use as store_use
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

PAUSE_S = 0.05  # between batches while events wait
IDLE_S = 1.0  # between looks when nothing was new
RETRY_S = 5.0


class UseService(BackgroundTask):
    """Reads each captured event once and records the uses of memory it shows."""

    name = "memory-use"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.read = 0
        self.waiting: int | None = None
        self.last_error: str | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        ctx.use_status = self.status
        self._task = asyncio.create_task(self._loop(), name="memory-use")

    def status(self) -> dict[str, object]:
        return {"waiting": self.waiting, "read": self.read, "error": self.last_error}

    def work_once(self) -> int:
        """One batch of events; how many were read."""
        assert self._ctx is not None
        conn = self._ctx.connect()
        try:
            done = use.derive(conn)
            self.read += done
            self.waiting = store_use.waiting(conn) if done else 0
            return done
        finally:
            conn.close()

    async def _loop(self) -> None:
        while True:
            try:
                done = await asyncio.to_thread(self.work_once)
                self.last_error = None
            except Exception as exc:  # a busy or damaged store: try again later, never take the worker down
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("deriving the use of memory failed: %s", self.last_error)
                await asyncio.sleep(RETRY_S)
                continue
            await asyncio.sleep(PAUSE_S if done else IDLE_S)
