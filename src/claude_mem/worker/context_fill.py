"""The context field's work that is left to the worker (issue 29, `store.context_field`).

- Rows stored before m017 (a store too large to index at the upgrade) are indexed with their neighbours'
  text, newest first, one transaction of `context_field.BATCH` rows of each kind at a time; searches
  meanwhile find what is indexed so far and say how many rows are not yet.
- A row's context gains the rows stored after it (up to two) here, within about a second, not in the
  write that stored them: the insert triggers only queue it, which keeps the observer's write fast.

A pause between batches lets hooks and the observer take their turn at the write lock; `/health` shows
`keyword_index` {waiting, queued, indexed, refreshed, error}.
"""

from __future__ import annotations

import logging
import time

from claude_mem.store import context_field
from claude_mem.worker.background import PollingTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")


class ContextFillService(PollingTask):
    """Indexes the rows m017 left to the worker, then keeps every row's context current."""

    name = "context-index"
    doing = "keeping the search context current"
    idle = 0.5  # between looks when nothing was done

    def __init__(self) -> None:
        super().__init__()
        self.indexed = self.refreshed = 0
        self.waiting: int | None = None
        self.queued: int | None = None
        self._started = time.monotonic()

    def attach(self, ctx: WorkerContext) -> None:
        ctx.index_status = self.status

    def work_once(self) -> int:
        """One batch: rows stored before m017 first, then rows a newer neighbour joined; how many rows."""
        conn = self.connect()
        try:
            if context_field.filling(conn):
                done = context_field.fill(conn)
                self.indexed += done
                self.waiting = context_field.waiting(conn)
                if not self.waiting:
                    log.info("indexed %d stored rows with their neighbours' text in %.1f s", self.indexed,
                             time.monotonic() - self._started)
                return max(done, 1)  # a batch of rows already indexed is progress too
            self.waiting = 0
            done = context_field.refresh_queued(conn)
            self.refreshed += done
            self.queued = context_field.queued(conn) if done else 0
            return done
        finally:
            conn.close()


    def status(self) -> dict[str, object]:
        """{waiting, queued, indexed, refreshed, error}: rows stored before m017 not yet in the keyword index,
        rows waiting for a newer neighbour's text, and what this worker did of each."""
        return {"waiting": self.waiting, "queued": self.queued, "indexed": self.indexed, "refreshed": self.refreshed,
                "error": self.last_error}
