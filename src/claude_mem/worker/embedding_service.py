"""Vectors as derived data: the worker embeds every observation, summary and prompt that has none
(whatever wrote the row: the observer, `remember`, an import), and re-embeds when the model changes.
Progress is in `/health` (`vectors`) and `status`; without the `search` extra it says why and idles."""

from __future__ import annotations

import asyncio
import logging

from claude_mem.index import embedder
from claude_mem.store import vectors
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

BATCH = 32
# After a pass that found nothing, wait this long, doubling up to IDLE_MAX (a pass scans every table).
IDLE_SECONDS = 2.0
IDLE_MAX = 30.0


class EmbeddingService(BackgroundTask):
    """Backfills vectors in batches, on a thread (the model is CPU-bound), one batch at a time."""

    name = "embeddings"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.reason = ""

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        ctx.vector_status = self.status
        self.reason = embedder.unavailable() or ""
        if self.reason:
            log.info("search by meaning is off: %s", self.reason)
            return
        self._task = asyncio.create_task(self._loop(), name="embeddings")

    def backfill_once(self) -> int:
        """Embed one batch of rows without a vector; returns how many (0 when all are done)."""
        assert self._ctx is not None
        from claude_mem.index.semantic import embed_missing

        conn = self._ctx.connect()
        try:
            return embed_missing(conn, BATCH)
        finally:
            conn.close()

    async def _loop(self) -> None:
        idle = IDLE_SECONDS
        while True:
            try:
                done = await asyncio.to_thread(self.backfill_once)
            except embedder.ModelUnavailable as exc:  # a damaged model file: keyword search carries on
                self.reason = str(exc)
                log.error("search by meaning is off: %s", exc)
                return
            except Exception:  # a busy database, a bad row: try again later, never take the worker down
                log.exception("embedding backfill failed")
                done = 0
            if done:
                idle = IDLE_SECONDS
            else:
                await asyncio.sleep(idle)
                idle = min(idle * 2, IDLE_MAX)

    def status(self) -> dict[str, object]:
        """{model, available, reason, embedded, total} for /health and `status`."""
        assert self._ctx is not None
        conn = self._ctx.connect()
        try:
            counts = vectors.progress(conn, embedder.MODEL)
        finally:
            conn.close()
        return {"model": embedder.MODEL, "available": not self.reason, "reason": self.reason, **counts}
