"""The observer as a worker service: ingest the spool, run the pipeline, sweep idle sessions.

On start it requeues claims left by a dead worker (the worker is single-instance, so every claim
found then is stale). On stop it stops claiming, lets the in-flight batch finish for a few seconds
or releases it, and closes every observer conversation.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Mapping
from typing import Any

from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.provider import REGISTRY, Provider
from claude_mem.store import DatabaseError, queue
from claude_mem.store.capture import ingest_spool
from claude_mem.store.probe import is_lock_error

log = logging.getLogger("claude_mem.observer")

INGEST_SECONDS = 2.0
SWEEP_SECONDS = 300.0
STOP_GRACE_SECONDS = 10.0


def create_provider(settings: Mapping[str, object]) -> Provider:
    """The provider named by the `provider` setting, resolved by the one registry (`auto` included)."""
    providers = importlib.import_module("claude_mem.observer.providers")  # registers every provider
    name, reason = providers.choose(settings)
    log.info("observer provider %s (%s)", name, reason)
    return REGISTRY.create(name, settings)


class ObserverService:
    name = "observer"

    def __init__(self, provider: Provider | None = None) -> None:
        self.provider = provider
        self.pipeline: Pipeline | None = None
        self.tasks: list[asyncio.Task[None]] = []
        self.ctx: Any = None

    async def start(self, ctx: Any) -> None:
        self.ctx = ctx
        provider = self.provider or create_provider(ctx.settings)
        conn = ctx.connect()
        released = queue.release_stale_claims(conn, int(ctx.settings.get("max_attempts") or 3))
        if released:
            log.info("requeued %d events claimed by a previous worker", released)
        self.revive(conn)
        self.pipeline = Pipeline(conn, ctx.settings, provider, publish=ctx.bus.publish,
                                 store_notes=ctx.store_notes, problems=ctx.service_errors)
        ctx.provider_health = self.pipeline.health
        # The provider actually running (`auto` resolved): the daemon writes it to worker.json.
        ctx.provider_name = provider.name
        self.tasks = [asyncio.create_task(self.pipeline.run(), name="observer-lanes"),
                      asyncio.create_task(self._housekeeping(), name="observer-housekeeping")]

    def revive(self, conn: Any) -> int:
        """Events that failed for a transient reason and waited long enough: back in the queue."""
        backoff = self.ctx.settings.get("retry_backoff_seconds")
        revived = queue.revive_transient(conn, backoff_base=float(backoff) if isinstance(backoff, (int, float)) else 2.0)
        if revived:
            log.info("retrying %d event(s) that failed for a transient reason (worker stopped, provider"
                     " or database unavailable)", revived)
        return revived

    async def _housekeeping(self) -> None:
        assert self.pipeline is not None
        pipeline, since_sweep, locked = self.pipeline, SWEEP_SECONDS, False
        while not pipeline.stopping.is_set():
            # Two chores, each failing on its own: a spool problem must never stop the idle sweep.
            try:
                count = await pipeline.db(ingest_spool, self.ctx.data_dir)
                if count:
                    log.info("ingested %d spooled events", count)
            except DatabaseError as exc:
                if not is_lock_error(exc):
                    log.exception("ingesting the spool failed")
                elif not locked:  # the lane says the database is locked; here once, and the spool waits
                    log.warning("the spool waits for the locked database (%s)", exc)
                locked = is_lock_error(exc)
            except Exception:
                log.exception("ingesting the spool failed")
            else:
                locked = False
            try:
                await pipeline.db(self.revive)
            except DatabaseError as exc:
                if not is_lock_error(exc):
                    log.exception("retrying transient failures failed")
            except Exception:
                log.exception("retrying transient failures failed")
            if since_sweep >= SWEEP_SECONDS:
                since_sweep = 0.0
                try:
                    idle = await pipeline.sweep_idle()
                    if idle:
                        log.info("marked %d idle sessions interrupted", len(idle))
                except DatabaseError as exc:
                    if not is_lock_error(exc):
                        log.exception("the idle-session sweep failed")
                    else:
                        log.warning("the idle-session sweep waits for the locked database (%s)", exc)
                except Exception:
                    log.exception("the idle-session sweep failed")
            try:
                await asyncio.wait_for(pipeline.stopping.wait(), INGEST_SECONDS)
            except TimeoutError:
                since_sweep += INGEST_SECONDS

    async def stop(self) -> None:
        if self.pipeline is None:
            return
        lanes, housekeeping = self.tasks
        await self.pipeline.stop(STOP_GRACE_SECONDS, lanes)
        housekeeping.cancel()
        await asyncio.gather(housekeeping, return_exceptions=True)
        try:
            await self.pipeline.provider.aclose()
        except Exception:
            log.exception("closing the observer provider failed")
        conn = self.pipeline.conn
        self.pipeline.close()
        conn.close()
