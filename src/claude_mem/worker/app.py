"""The worker's ASGI app: routes, security middleware, error handlers, and the services lifespan."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from claude_mem.recall.common import RecallError, UnknownRecord
from claude_mem.worker import (
    routes_failures,
    routes_forget,
    routes_memory,
    routes_queue,
    routes_search,
    routes_settings,
    routes_stream,
    routes_team,
    routes_viewer,
)
from claude_mem.worker.bodies import BodyGuard
from claude_mem.worker.context import WorkerContext
from claude_mem.worker.health import health_report
from claude_mem.worker.security import SecurityMiddleware
from claude_mem.worker.services import Service, default_services, start_services, stop_services

log = logging.getLogger("claude_mem.worker")

ERROR_CODES = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
               409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid", 500: "internal"}


def error_response(status: int, message: str, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code or ERROR_CODES.get(status, "error"), "message": message}},
                        status_code=status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail))


async def recall_error(request: Request, exc: Exception) -> Response:
    """Input the recall library refused: 404 when it names nothing stored, else 400."""
    return error_response(404 if isinstance(exc, UnknownRecord) else 400, str(exc))


async def internal_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal error (details are in the worker log)")


async def health(request: Request) -> Response:
    return JSONResponse(await health_report(request.app.state.ctx))


def create_app(ctx: WorkerContext, services: list[Service] | None = None,
               extra_routes: list[BaseRoute] | None = None) -> Starlette:
    """The app for `ctx`; its lifespan starts `services` (default: `default_services`) and stops them."""
    chosen = default_services(ctx.settings) if services is None else services

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started = await start_services(ctx, chosen)
        try:
            yield
        finally:
            await stop_services(started)
            ctx.readers.close()

    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]), *routes_settings.ROUTES, *routes_memory.ROUTES, *routes_forget.ROUTES,
        *routes_failures.ROUTES,
        *routes_search.ROUTES, *routes_queue.ROUTES, *routes_stream.ROUTES, *routes_team.ROUTES,
        *routes_viewer.ROUTES,
        *(extra_routes or []),
    ]
    port_of: Callable[[], int] = lambda: ctx.port  # noqa: E731
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityMiddleware, port_of=port_of), Middleware(BodyGuard)],
        exception_handlers={HTTPException: http_error, RecallError: recall_error, Exception: internal_error},
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    return app
