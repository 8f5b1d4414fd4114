"""What the worker's looping services share: one background task, cancelled on stop."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claude_mem.store import Store
    from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")


class BackgroundTask:
    """A service that runs one asyncio task; `stop` cancels it and waits for it to end."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None


class PollingTask(BackgroundTask):
    """A service that calls `work_once` (on a thread, with a connection of its own) again and again: after
    `pause` when it did something, `idle` when it did not, `retry` after an error, which it logs as "`doing`
    failed" and keeps in `last_error` for /health; it never takes the worker down."""

    name = "polling"
    doing = "background work"  # what `work_once` does, for the log
    pause, idle, retry = 0.05, 1.0, 5.0
    # Catch-up work that can wait leaves the first seconds of a new worker to what it was started for (a
    # search by meaning a CLI is waiting on: the model loads then).
    startup_delay = 0.0

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.last_error: str | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        self.attach(ctx)
        self._task = asyncio.create_task(self._loop(), name=self.name)

    def attach(self, ctx: WorkerContext) -> None:
        """Hook the service's status into `ctx` for /health."""

    def connect(self) -> Store:
        assert self._ctx is not None
        return self._ctx.connect()

    def work_once(self) -> int:
        """One round of work; how much was done (0: nothing to do)."""
        raise NotImplementedError

    async def _loop(self) -> None:
        await asyncio.sleep(self.startup_delay)
        while True:
            try:
                done = await asyncio.to_thread(self.work_once)
                self.last_error = None
            except Exception as exc:  # a busy or damaged store: try again later, never take the worker down
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("%s failed: %s", self.doing, self.last_error)
                await asyncio.sleep(self.retry)
                continue
            await asyncio.sleep(self.pause if done else self.idle)
