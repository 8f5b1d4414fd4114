"""The worker's team service (DESIGN §12): every `team_sync_seconds`, push this machine's new rows of
shared projects to the team server and pull the others'. The server being away stops nothing but
replication: the error is one line in `/health` and `team status`, and the next exchange retries
(backing off to `RETRY_MAX`); what waits is counted as the outbox."""

from __future__ import annotations

import asyncio
import logging
import time

from claude_mem.store import team as local
from claude_mem.team import config as team_config
from claude_mem.team import integrity
from claude_mem.team.sync import Replicator, record_failure
from claude_mem.worker.background import BackgroundTask
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

RETRY_MAX = 30.0


class TeamService(BackgroundTask):
    name = "team"

    def __init__(self) -> None:
        super().__init__()
        self._ctx: WorkerContext | None = None
        self.config: team_config.TeamConfig | None = None
        self.replicator: Replicator | None = None
        self.problem: str | None = None
        self.error = ""
        self.connected = False
        self.last_sync = 0.0

    async def start(self, ctx: WorkerContext) -> None:
        self._ctx = ctx
        ctx.team_status = self.status
        self.config = team_config.from_settings(ctx.settings)
        if not self.config.enabled:
            return
        self.problem = self.config.problem()
        if self.problem:
            log.warning("team memory is off: %s", self.problem)
            return
        self.replicator = Replicator(self.config, ctx.connect)
        self._task = asyncio.create_task(self._loop(), name="team")

    async def stop(self) -> None:
        await super().stop()
        if self.replicator is not None:
            await asyncio.to_thread(self.replicator.close)

    def exchange(self) -> None:
        assert self.replicator is not None
        totals = self.replicator.sync_once()
        if totals.migrated:
            log.info("team server schema brought up to date: %s", ", ".join(totals.migrated))
        if totals.resent:
            log.info("team: %d row(s) the server had lost were sent again", totals.resent)
        if totals.pushed or totals.pulled or totals.buried or totals.deleted:
            log.info("team: pushed %d, pulled %d, deleted %d (buried %d)", totals.pushed, totals.pulled,
                     totals.deleted, totals.buried)

    async def _loop(self) -> None:
        assert self.config is not None and self.replicator is not None and self._ctx is not None
        delay = self.config.interval
        while True:
            try:
                await asyncio.to_thread(self.exchange)
                if self.error:
                    log.info("team server reachable again")
                self.error, self.connected, self.last_sync = "", True, time.time()
                delay = self.config.interval
            except Exception as exc:  # the server away, a wrong password, a newer schema: retry later
                message = self.replicator.describe(exc)
                if message != self.error:
                    log.error("team sync failed: %s", message)
                self.error, self.connected = message, False
                await asyncio.to_thread(self.replicator.close)
                await asyncio.to_thread(record_failure, self._ctx.connect, message)
                delay = min(max(delay, self.config.interval) * 2, RETRY_MAX)
            await asyncio.sleep(delay)

    def status(self) -> dict[str, object]:
        """What /health and `team status` show (no secret: the server is host, port and database)."""
        assert self._ctx is not None
        config = self.config or team_config.from_settings(self._ctx.settings)
        report: dict[str, object] = {"enabled": config.enabled}
        if not config.enabled:
            return report
        conn = self._ctx.connect()
        try:
            saved = local.state(conn)
            # The running replicator when there is one: it knows the checkouts' remotes already.
            outbox = (self.replicator or Replicator(config, self._ctx.connect)).outbox(conn)
        finally:
            conn.close()
        report.update({
            "server": team_config.server_label(config.url), "projects": list(config.patterns),
            "author": config.author, "device": saved.get("device"), "problem": self.problem,
            "connected": self.connected, "error": self.error or None, "outbox": outbox,
            "last_sync_at": saved.get("last_sync_at"), "since_sync_seconds":
                round(time.time() - self.last_sync, 1) if self.last_sync else None,
            "pushed": int(saved.get("pushed", "0")), "pulled": int(saved.get("pulled", "0")),
            "deleted": int(saved.get("deleted", "0")), "interval_seconds": config.interval,
            **integrity.report(saved),
        })
        return report
