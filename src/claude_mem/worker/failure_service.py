"""The worker's share of "failures and their fixes" (issue 31): resolution links derived from the captured
events (`recall.failures.resolve`) off every hook's path — a successful Bash call marks the earlier failures
of the same normalized command in its project resolved, with what was done in between — a batch at a time,
within a second or two of the event, so the next failure's note can name the fix."""

from __future__ import annotations

from claude_mem.recall import failures
from claude_mem.store import failures as store_failures
from claude_mem.worker.background import PollingTask


class FailureService(PollingTask):
    """Reads each captured event once and links the successes to the failures they resolve."""

    name = "failures"
    doing = "linking failures to their fixes"

    def __init__(self) -> None:
        super().__init__()
        self.read = 0
        self.waiting: int | None = None

    def status(self) -> dict[str, object]:
        return {"waiting": self.waiting, "read": self.read, "error": self.last_error}

    def work_once(self) -> int:
        """One batch of events; how many were read."""
        conn = self.connect()
        try:
            done = failures.resolve(conn)
            self.read += done
            self.waiting = store_failures.waiting(conn) if done else 0
            return done
        finally:
            conn.close()
