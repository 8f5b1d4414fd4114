"""The periodic snapshot service: a `VACUUM INTO` every `backup_interval_hours`, rotated."""

from __future__ import annotations

import asyncio
import logging
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
        # time.monotonic() of this worker's last snapshot attempt: within one process the interval is kept
        # by a clock that never jumps, whatever the wall clock does (at most one snapshot per interval).
        self._last_attempt: float | None = None

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        interval_hours = float(ctx.settings.get("backup_interval_hours") or 0)
        if interval_hours <= 0:
            log.info("automatic backups are off (backup_interval_hours = 0)")
            return
        self._task = asyncio.create_task(self._loop(interval_hours * 3600), name="backups")

    def due_in(self, interval: float) -> float:
        """Seconds until the next snapshot is due (0 when one is due now): an interval after this worker's
        last attempt and after the newest snapshot by its own record (a `claude-mem backup` counts; a
        snapshot dated in the future does not)."""
        assert self._ctx is not None
        ours = 0.0 if self._last_attempt is None else interval - (time.monotonic() - self._last_attempt)
        age = backup.newest_age(self._ctx.data_dir)
        return max(0.0, ours, 0.0 if age is None else interval - age)

    async def _loop(self, interval: float) -> None:
        assert self._ctx is not None
        keep = int(self._ctx.settings.get("backups_keep") or 1)
        while True:
            await asyncio.sleep(max(self.due_in(interval), 1.0))
            self._last_attempt = time.monotonic()
            try:
                path = await asyncio.to_thread(backup.snapshot, self._ctx.data_dir, keep)
                self.last_error = None
                log.info("database snapshot written: %s", path)
            except Exception as exc:  # a failed snapshot must never take the worker down
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("database snapshot failed")
                self._last_attempt = time.monotonic() - max(0.0, interval - min(interval, 3600.0))  # retry in ≤ 1 h
