"""Publishes user prompts on the bus as the hooks store them (hooks are other processes, so: a poll).

Only while someone listens on the stream; one indexed `MAX(id)`-style query per `POLL_SECONDS`
otherwise. Private prompts are never published.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from claude_mem.recall.common import row_dict
from claude_mem.store import db
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

POLL_SECONDS = 1.0
MAX_PER_POLL = 100
_NEW_PROMPTS = (
    "SELECT p.id, p.session_id, p.prompt_number, p.text, p.created_at, s.project AS project,"
    " s.content_session_id AS content_session_id FROM prompts p JOIN sessions s ON s.id = p.session_id"
    " WHERE p.id > ? AND p.private = 0 ORDER BY p.id LIMIT ?"
)


def newest_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM prompts").fetchone()[0])


def prompts_after(conn: sqlite3.Connection, last: int) -> list[dict]:
    cursor = conn.execute(_NEW_PROMPTS, (last, MAX_PER_POLL))
    return [{"kind": "prompt", "ref": f"P{row[0]}", **row_dict(cursor, row)} for row in cursor.fetchall()]


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
