"""The periodic snapshot service: a `VACUUM INTO` every `backup_interval_hours`, rotated."""

from __future__ import annotations

import asyncio
import logging
import os
import time

from claude_mem.store import backup
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")


class BackupService(BackgroundTask):
    """Snapshots the database when the newest snapshot is older than the interval (0 = never)."""

    name = "backups"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.last_error: str | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        interval_hours = float(ctx.settings.get("backup_interval_hours") or 0)
        if interval_hours <= 0:
            log.info("automatic backups are off (backup_interval_hours = 0)")
            return
        self._task = asyncio.create_task(self._loop(interval_hours * 3600), name="backups")

    def due_in(self, interval: float) -> float:
        """Seconds until the next snapshot is due (0 when one is due now)."""
        assert self._ctx is not None
        existing = backup.list_backups(self._ctx.data_dir)
        if not existing:
            return 0.0
        age = time.time() - os.path.getmtime(existing[-1])
        return max(0.0, interval - age)

    async def _loop(self, interval: float) -> None:
        assert self._ctx is not None
        keep = int(self._ctx.settings.get("backups_keep") or 1)
        while True:
            await asyncio.sleep(max(self.due_in(interval), 1.0))
            try:
                path = await asyncio.to_thread(backup.snapshot, self._ctx.data_dir, keep)
                self.last_error = None
                log.info("database snapshot written: %s", path)
            except Exception as exc:  # a failed snapshot must never take the worker down
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("database snapshot failed")
                await asyncio.sleep(min(interval, 3600.0))
