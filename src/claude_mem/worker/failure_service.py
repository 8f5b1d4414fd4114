"""The worker's share of "failures and their fixes" (issue 31): resolution links derived from the captured
events (`recall.failures.resolve`) off every hook's path — a successful Bash call marks the earlier failures
of the same normalized command in its project resolved, with what was done in between — a batch at a time,
within a second or two of the event, so the next failure's note can name the fix."""

from __future__ import annotations

from claude_mem.capture import failing
from claude_mem.recall import failures
from claude_mem.store import failures as store_failures
from claude_mem.worker.background import PollingTask
from claude_mem.worker.context import WorkerContext


class FailureService(PollingTask):
    """Reads each captured event once and links the successes to the failures they resolve."""

    name = "failures"
    doing = "linking failures to their fixes"
    startup_delay = 2.0  # see PollingTask

    def __init__(self) -> None:
        super().__init__()
        self.read = 0
        self.waiting: int | None = None
        self._failing: list[str] | None = None  # what the file of failing commands holds

    def attach(self, ctx: WorkerContext) -> None:
        ctx.failures_status = self.status

    def status(self) -> dict[str, object]:
        return {"waiting": self.waiting, "read": self.read, "error": self.last_error}

    def work_once(self) -> int:
        """One batch of events; how many were read. The pre-tool hook's file of failing commands
        (`capture.failing`) is rewritten at the start and whenever their set changed."""
        conn = self.connect()
        try:
            done = failures.resolve(conn)
            self.read += done
            self.waiting = store_failures.waiting(conn) if done else 0
            if done or self._failing is None:
                current = store_failures.open_commands(conn)
                if current != self._failing:
                    assert self._ctx is not None
                    failing.rewrite(self._ctx.data_dir, current)
                    self._failing = current
            return done
        finally:
            conn.close()
