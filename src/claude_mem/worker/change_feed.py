"""Publishes every write to memory on the bus, whichever process made it: `observation`, `summary` and
`prompt` events for rows added or changed, `forget` events for rows deleted.

Hooks, the CLI (`remember`, `forget`, imports, `projects merge`), team replication and the worker
itself all write the same SQLite file, and triggers log each of those writes in the `changes` table
(`store.changes`), so no write path has to remember to announce itself. This service is the ONLY
publisher of those four kinds: the worker's own writes (the observer's results, a forget through the
API) reach the stream through the log like any other, so nothing is published twice and every event
of a kind has one shape, whoever wrote the row — at the cost of at most `POLL_SECONDS` of delay.

While someone listens it looks every `POLL_SECONDS`: `PRAGMA data_version` first (it moves only when
another connection committed; nothing is read otherwise), then one indexed read of the log past its
mark. While nobody listens it only moves the mark, so a new subscriber gets what is written from then
on (a viewer loads what came before through the API). A big write (an import) is read
`MAX_PER_POLL` entries at a time. A log behind the mark (an older backup restored) restarts it at its
newest entry. Private prompts are never published. A forget event lists what left the database
(`{observations, summaries, prompts}` by row id, `sessions` by Claude Code id, `project` None: a
project's forget arrives as the ids it removed).
"""

from __future__ import annotations

import asyncio
import logging

from claude_mem.store import DatabaseError, Store, changes
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

POLL_SECONDS = 0.25
MAX_PER_POLL = 500


class Feed:
    """The mark and the connection it is read through; `poll` returns what came after the mark."""

    def __init__(self, conn: Store) -> None:
        self.conn = conn
        self.version = changes.data_version(conn)
        self.last = changes.newest(conn)

    def poll(self, listening: bool) -> list[tuple[str, object]]:
        """The events written since the last poll ((kind, data): rows in log order, then one `forget`);
        none unless `listening`."""
        version = changes.data_version(self.conn)
        if version == self.version:
            return []
        newest = changes.newest(self.conn)
        if not listening or newest < self.last:  # nobody to tell, or the log was replaced (a restore)
            self.version, self.last = version, newest
            return []
        found = changes.after(self.conn, self.last, MAX_PER_POLL)
        self.last = found.last
        if self.last >= newest:  # else the rest is read at the next poll, whatever data_version says
            self.version = version
        events: list[tuple[str, object]] = list(found.rows)
        if found.forgot:
            events.append(("forget", {**found.removed, "project": None}))
        return events


class ChangeFeed:
    """A worker service: every write to memory, from any process, as events on the bus."""

    name = "change-feed"

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    async def start(self, ctx: WorkerContext) -> None:
        conn = await asyncio.to_thread(ctx.connect)
        try:
            feed = await asyncio.to_thread(Feed, conn)
        except BaseException:
            conn.close()
            raise
        self._task = asyncio.create_task(self._loop(ctx, feed), name="change-feed")

    async def _loop(self, ctx: WorkerContext, feed: Feed) -> None:
        failure = ""
        try:
            while True:
                await asyncio.sleep(POLL_SECONDS)
                try:
                    for kind, data in await asyncio.to_thread(feed.poll, ctx.bus.subscriber_count > 0):
                        ctx.bus.publish(kind, data)
                    failure = ""
                except DatabaseError as exc:
                    if str(exc) != failure:  # logged once while it lasts, not four times a second
                        log.exception("change feed poll failed")
                    failure = str(exc)
        finally:
            feed.conn.close()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
