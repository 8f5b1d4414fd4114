"""Background work of the worker, as services started and stopped by the app lifespan.

A service is any object with `name`, `async start(ctx)` and `async stop()`. `start` must return
promptly (spawn a task for long-running loops); `stop` finishes or releases in-flight work. Services
start in list order and stop in reverse order, each stop bounded by `STOP_TIMEOUT` seconds, so one
stuck service never keeps the worker from exiting. Other packages append theirs in
`default_services` (the observer pipeline goes there).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from typing import Protocol, runtime_checkable

from claude_mem.worker.backup_service import BackupService
from claude_mem.worker.context import WorkerContext
from claude_mem.worker.embedding_service import EmbeddingService
from claude_mem.worker.team_service import TeamService

log = logging.getLogger("claude_mem.worker")

STOP_TIMEOUT = 20.0
# Only for the test suite: "module:factory[,module:factory]" whose factories return extra services.
TEST_SERVICES_ENV = "CLAUDE_MEM_TEST_SERVICES"


@runtime_checkable
class Service(Protocol):
    name: str

    async def start(self, ctx: WorkerContext) -> None: ...

    async def stop(self) -> None: ...


def default_services(settings: dict[str, object]) -> list[Service]:
    """The services every worker runs, in start order."""
    from claude_mem.observer.service import ObserverService
    from claude_mem.worker.change_feed import ChangeFeed

    services: list[Service] = [BackupService(), ObserverService(), ChangeFeed(), EmbeddingService(), TeamService()]
    services.extend(test_services())
    return services


def test_services() -> list[Service]:
    """Services named by CLAUDE_MEM_TEST_SERVICES (never set outside the test suite)."""
    spec = os.environ.get(TEST_SERVICES_ENV, "").strip()
    found: list[Service] = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        module_name, _, factory_name = item.partition(":")
        factory = getattr(importlib.import_module(module_name), factory_name)
        found.append(factory())
    return found


async def start_services(ctx: WorkerContext, services: list[Service]) -> list[Service]:
    """Start services in order; a failing one is logged and reported, the others still start."""
    started: list[Service] = []
    for service in services:
        try:
            await service.start(ctx)
        except Exception as exc:
            log.exception("service %s failed to start", service.name)
            ctx.service_errors[service.name] = f"{type(exc).__name__}: {exc}"
            continue
        started.append(service)
        log.info("service %s started", service.name)
    return started


async def stop_services(services: list[Service], timeout: float = STOP_TIMEOUT) -> None:
    """Stop services in reverse order, each within `timeout` seconds; never raises."""
    for service in reversed(services):
        try:
            await asyncio.wait_for(service.stop(), timeout)
            log.info("service %s stopped", service.name)
        except TimeoutError:
            log.error("service %s did not stop within %.0f s; abandoning it", service.name, timeout)
        except Exception:
            log.exception("service %s failed to stop cleanly", service.name)
