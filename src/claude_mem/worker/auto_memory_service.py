"""Keeps Claude Code's auto memory of recently active projects in our index (issue 30, `recall.auto_memory`).

Every `INTERVAL_S` the memory directory of each project with a session in the last `RECENT_DAYS` is
compared with its rows by stat alone (a listing: no file is read); only a directory that changed is
synced, reading just the files whose size or mtime moved. `/health` shows `auto_memory`
{projects, files, synced, last_sync, error}.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from claude_mem.recall import auto_memory
from claude_mem.store import auto_memory as repository
from claude_mem.worker.background import PollingTask
from claude_mem.worker.context import WorkerContext

INTERVAL_S = 10.0
PROJECTS_EVERY_S = 60.0  # how often the list of recently active projects is read again (and on a new session)
RECENT_DAYS = 7
RETRY_S = 30.0


class AutoMemoryService(PollingTask):
    """Syncs the auto memory directories of recently active projects when they change."""

    name = "auto-memory"
    doing = "indexing Claude Code's auto memory"
    startup_delay = 2.0  # see PollingTask
    retry = RETRY_S

    def __init__(self, interval: float = INTERVAL_S) -> None:
        super().__init__()
        self.pause = self.idle = interval  # one look every interval, whatever it found
        self.projects: list[str] = []
        self._listed_at = float("-inf")
        self._newest_session = -1
        self.synced = 0
        self.files: int | None = None
        self.last_sync: str | None = None

    def attach(self, ctx: WorkerContext) -> None:
        ctx.auto_memory_status = self.status

    def work_once(self) -> int:
        """One look at every recent project's directory; how many were synced."""
        conn = self.connect()
        try:
            newest = repository.newest_session(conn)  # a new session: its project is watched from its first look
            if time.monotonic() - self._listed_at >= PROJECTS_EVERY_S or newest != self._newest_session:
                self._newest_session = newest
                since = (datetime.now(UTC) - timedelta(days=RECENT_DAYS)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
                self.projects = repository.recent_projects(conn, since)
                self._listed_at = time.monotonic()
            done = 0
            for project in self.projects:
                if repository.last_sync(conn, project) is not None and auto_memory.unchanged(conn, project):
                    continue
                report = auto_memory.sync(conn, project)
                done += 1
                self.last_sync = f"{project}: {report['files']} files, {report['read']} read, {report['removed']} removed"
            self.synced += done
            self.files = repository.counts(conn)
            return done
        finally:
            conn.close()


    def status(self) -> dict[str, object]:
        """{projects, files, synced, last_sync, error}: projects watched, note files indexed in all, syncs done."""
        return {"projects": len(self.projects), "files": self.files, "synced": self.synced,
                "last_sync": self.last_sync, "error": self.last_error}
