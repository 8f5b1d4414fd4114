"""Publishes user prompts on the bus as the hooks store them (hooks are other processes, so: a poll).

Only while someone listens on the stream; one indexed `MAX(id)`-style query per `POLL_SECONDS`
otherwise. Private prompts are never published.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from claude_mem.domain import ref
from claude_mem.store import db, memory
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

POLL_SECONDS = 1.0
MAX_PER_POLL = 100


def newest_id(conn: sqlite3.Connection) -> int:
    return memory.newest_prompt_id(conn)


def prompts_after(conn: sqlite3.Connection, last: int) -> list[dict]:
    """The next public prompts as stream events: `{kind, ref, id, session_id, prompt_number, text, …}`."""
    return [{"kind": "prompt", "ref": ref("prompt", row["id"]), **row}
            for row in memory.prompts_after(conn, last, MAX_PER_POLL)]


class PromptFeed:
    """A worker service: `prompt` events for the SSE stream."""

    name = "prompt-feed"

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._task = asyncio.create_task(self._loop(ctx), name="prompt-feed")

    async def _loop(self, ctx: WorkerContext) -> None:
        conn = await asyncio.to_thread(db.connect, ctx.db_path)
        try:
            last = await asyncio.to_thread(newest_id, conn)
            while True:
                await asyncio.sleep(POLL_SECONDS)
                try:
                    if ctx.bus.subscriber_count == 0:
                        last = await asyncio.to_thread(newest_id, conn)
                        continue
                    for row in await asyncio.to_thread(prompts_after, conn, last):
                        last = max(last, int(row["id"]))
                        ctx.bus.publish("prompt", row)
                except sqlite3.Error:
                    log.exception("prompt feed poll failed")
        finally:
            conn.close()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
