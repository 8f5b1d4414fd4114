"""Indexing the rows stored before m017 with their neighbours' text (issue 29), a batch at a time.

A store small enough is indexed by the first `connect` after the upgrade; a larger one is indexed here,
newest rows first, one transaction of `context_field.BATCH` rows of each kind at a time, with a pause
between batches so hooks and the observer keep their turn at the write lock. Searches meanwhile find
what is indexed so far and say how many rows are not yet (`/health` shows the same).
"""

from __future__ import annotations

import asyncio
import logging
import time

from claude_mem.store import context_field
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

PAUSE_S = 0.05
RETRY_S = 5.0


class ContextFillService(BackgroundTask):
    """Indexes the rows m017 left to the worker; ends when none are left."""

    name = "context-index"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.indexed = 0
        self.waiting: int | None = None
        self.finished_at: float | None = None
        self.last_error: str | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        ctx.index_status = self.status
        self._task = asyncio.create_task(self._loop(), name="context-index")

    def fill_once(self) -> int:
        """One batch; returns how many rows it indexed, or -1 when nothing waits any more."""
        assert self._ctx is not None
        conn = self._ctx.connect()
        try:
            if not context_field.filling(conn):
                return -1
            done = context_field.fill(conn)
            self.indexed += done
            self.waiting = context_field.waiting(conn)
            return done
        finally:
            conn.close()

    async def _loop(self) -> None:
        started = time.monotonic()
        while True:
            try:
                done = await asyncio.to_thread(self.fill_once)
                self.last_error = None
            except Exception as exc:  # a busy or damaged store: try again later, never take the worker down
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("indexing stored rows with their context failed: %s", self.last_error)
                await asyncio.sleep(RETRY_S)
                continue
            if done < 0:
                if self.indexed:
                    log.info("indexed %d stored rows with their neighbours' text in %.1f s", self.indexed,
                             time.monotonic() - started)
                self.waiting, self.finished_at = 0, time.time()
                return
            await asyncio.sleep(PAUSE_S)

    def status(self) -> dict[str, object]:
        """{waiting, indexed, error}: rows not yet in the keyword index, rows this worker indexed."""
        return {"waiting": self.waiting, "indexed": self.indexed, "error": self.last_error}
