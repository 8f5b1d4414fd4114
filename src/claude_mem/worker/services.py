"""Background work of the worker, as services started and stopped by the app lifespan.

A service is any object with `name`, `async start(ctx)` and `async stop()`. `start` must return
promptly (spawn a task for long-running loops); `stop` finishes or releases in-flight work. Services
start in list order and stop in reverse order, each stop bounded by `STOP_TIMEOUT` seconds, so one
stuck service never keeps the worker from exiting. Other packages append theirs in
`default_services` (the observer pipeline goes there); other distributions add theirs through the
`claude_mem.worker_services` entry points (`claude_mem.plugins`), each a factory of one service.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol, runtime_checkable

from claude_mem import plugins
from claude_mem.worker.auto_memory_service import AutoMemoryService
from claude_mem.worker.backup_service import BackupService
from claude_mem.worker.context import WorkerContext
from claude_mem.worker.context_fill import ContextFillService
from claude_mem.worker.embedding_service import EmbeddingService
from claude_mem.worker.failure_service import FailureService
from claude_mem.worker.team_service import TeamService
from claude_mem.worker.use_service import UseService

log = logging.getLogger("claude_mem.worker")

STOP_TIMEOUT = 20.0


@runtime_checkable
class Service(Protocol):
    name: str

    async def start(self, ctx: WorkerContext) -> None: ...

    async def stop(self) -> None: ...


def default_services(settings: dict[str, object]) -> list[Service]:
    """The services every worker runs, in start order."""
    from claude_mem.observer.service import ObserverService
    from claude_mem.worker.capture_socket import CaptureSocket
    from claude_mem.worker.change_feed import ChangeFeed

    services: list[Service] = [BackupService(), CaptureSocket(), ObserverService(), ChangeFeed(), ContextFillService(),
                               UseService(), FailureService(), EmbeddingService(), TeamService(), AutoMemoryService()]
    services.extend(plugin_services())
    return services


def plugin_services() -> list[Service]:
    """The services installed plugins add; one that cannot be made fails at start, so /health names it."""
    found: list[Service] = []
    for name, factory in plugins.load_all(plugins.WORKER_SERVICES):
        try:
            if isinstance(factory, Exception):
                raise factory
            if not callable(factory):
                raise TypeError(f"{type(factory).__name__} is not a service factory")
            found.append(factory())
        except Exception as exc:
            log.exception("worker service plugin %s cannot be made", name)
            found.append(BrokenPlugin(f"plugin {name}", f"{type(exc).__name__}: {exc}"))
    return found


class BrokenPlugin:
    """Stands in for a plugin's service that could not be made: its start fails with the reason."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def start(self, ctx: WorkerContext) -> None:
        raise RuntimeError(self.reason)

    async def stop(self) -> None:
        return None


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
