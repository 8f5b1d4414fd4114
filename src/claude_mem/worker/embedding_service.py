"""Vectors as derived data: the worker embeds every observation, summary and prompt the store queues
(whatever wrote the row: the observer, `remember`, an import, team replication), re-embeds when the
model changes, converts the float32 vectors of before m016, and keeps the process's vector index (an
HNSW graph from `vector_index.GRAPH_FROM` rows on) in step and saved. Progress, rate and ETA are in
`/health` (`vectors`) and `status`; without the `search` extra it says why and idles. Keyword search
never waits for any of it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time

from claude_mem.index import embedder, vector_index
from claude_mem.store import Store, vectors
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

BATCH = 64
# After a pass that found nothing, wait this long, doubling up to IDLE_MAX (a pass reads the queue's head).
IDLE_SECONDS = 1.0
IDLE_MAX = 10.0
# The graph is saved at most this often while rows are added (a 1M-row graph is ~0.5 GB to write), at
# once after a removal (a forgotten vector must leave the file too), and on stop.
SAVE_EVERY_S = 600.0
RATE_WINDOW_S = 60.0
COUNTS_TTL_S = 2.0


class EmbeddingService(BackgroundTask):
    """Backfills vectors in batches, on a thread (the model is CPU-bound), one batch at a time."""

    name = "embeddings"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.reason = ""
        self._recent: list[tuple[float, int]] = []  # (when, rows) of the last RATE_WINDOW_S seconds
        self._saved_at = time.monotonic()
        self._save_soon = False  # a removal or a new graph not saved yet
        self._removals_seen = 0
        self._build: asyncio.Task[None] | None = None
        self._counts: tuple[float, dict[str, int]] | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        ctx.vector_status = self.status
        self.reason = embedder.unavailable() or ""
        if self.reason:
            log.info("search by meaning is off: %s", self.reason)
            return
        vector_index.allow_graphs(os.path.join(ctx.data_dir, "vectors"))
        self._task = asyncio.create_task(self._loop(), name="embeddings")

    async def stop(self) -> None:
        await super().stop()
        if self._build is not None:
            self._build.cancel()
        await asyncio.to_thread(self._save, True)

    def _connect(self) -> Store:
        assert self._ctx is not None
        return self._ctx.connect()

    def prepare(self) -> int:
        """Once at start: vectors of another model go (their rows are queued again); returns how many."""
        conn = self._connect()
        try:
            dropped = vectors.reset_model(conn, embedder.MODEL)
        finally:
            conn.close()
        if dropped:
            log.info("the embedding model changed: %d rows queued to embed again", dropped)
        return dropped

    def backfill_once(self) -> int:
        """Convert or embed one batch; returns how many rows (0 when nothing waits)."""
        from claude_mem.index.semantic import convert_legacy, embed_missing

        conn = self._connect()
        try:
            done = convert_legacy(conn) or embed_missing(conn, BATCH)
            index = vector_index.for_store(conn)  # follows what this batch and every other writer did
            if index.last_removal != self._removals_seen:
                self._removals_seen = index.last_removal
                self._save_soon = True  # a forgotten vector must leave the saved graph too
                vectors.trim_removals(conn)
        finally:
            conn.close()
        if done:
            self._recent.append((time.monotonic(), done))
        return done

    def _save(self, now: bool = False) -> None:
        if not (now or self._save_soon or time.monotonic() - self._saved_at >= SAVE_EVERY_S):
            return
        for index in vector_index.loaded():
            try:
                index.save()
            except OSError as exc:  # a full disk: the graph is rebuilt at the next start, search goes on
                log.warning("the vector index could not be saved: %s", exc)
        self._saved_at, self._save_soon = time.monotonic(), False

    def _build_graph(self, index: vector_index.VectorIndex) -> None:
        try:
            index.build_graph()
            self._save_soon = True  # minutes of work at 1M rows: kept for the next start
        except Exception:
            log.exception("building the vector index failed; exact search answers")

    async def _loop(self) -> None:
        try:
            await asyncio.to_thread(self.prepare)
        except Exception:  # a busy or damaged database at start: the backfill still runs (and stores the model)
            log.exception("checking the vectors' model failed")
        idle = IDLE_SECONDS
        while True:
            try:
                done = await asyncio.to_thread(self.backfill_once)
            except embedder.ModelUnavailable as exc:  # a damaged model file: keyword search carries on
                self.reason = str(exc)
                log.error("search by meaning is off: %s", exc)
                return
            except Exception:  # a busy database, a bad row, a full disk: try again later, never take the worker down
                log.exception("embedding backfill failed")
                done = 0
            for index in vector_index.loaded():
                if index.graph is None and not index.building and index.wants_graph() and \
                        (self._build is None or self._build.done()):
                    self._build = asyncio.create_task(asyncio.to_thread(self._build_graph, index), name="vector-index")
            if any(index.dirty for index in vector_index.loaded()):
                await asyncio.to_thread(self._save)
            if done:
                idle = IDLE_SECONDS
            else:
                # what a backfill, a graph build or a burst of searches freed goes back to the system
                await asyncio.to_thread(embedder.release_freed_memory)
                await asyncio.sleep(idle)
                idle = min(idle * 2, IDLE_MAX)

    def rate(self) -> float:
        """Rows embedded per second over the last minute (0 when idle)."""
        now = time.monotonic()
        self._recent = [(at, rows) for at, rows in self._recent if now - at <= RATE_WINDOW_S]
        if not self._recent:
            return 0.0
        span = max(now - self._recent[0][0], 1.0)
        return sum(rows for _at, rows in self._recent) / span

    def status(self) -> dict[str, object]:
        """{model, available, reason, embedded, queued, total, rate, eta_s, index} for /health and `status`.
        The counts are read at most every `COUNTS_TTL_S` (at 1M rows counting them takes ~20 ms, and a hook
        may ask /health)."""
        now = time.monotonic()
        if self._counts is None or now - self._counts[0] >= COUNTS_TTL_S:
            conn = self._connect()
            try:
                self._counts = (now, vectors.progress(conn))
            finally:
                conn.close()
        counts = self._counts[1]
        rate = self.rate()
        indexes = vector_index.loaded()
        index: dict[str, object] = {"kind": "none", "size": 0}
        if indexes:
            held = indexes[0]
            index = {"kind": "graph" if held.graph is not None else "exact", "size": len(held),
                     "building": held.building}
        return {"model": embedder.MODEL, "available": not self.reason, "reason": self.reason, **counts,
                "rate": round(rate, 1), "eta_s": round(counts["queued"] / rate) if rate and counts["queued"] else None,
                "index": index}
