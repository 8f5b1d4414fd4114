"""What the worker's looping services share: one background task, cancelled on stop."""

from __future__ import annotations

import asyncio


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
