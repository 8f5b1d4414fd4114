"""Settings over HTTP, and the worker restart that applies the ones read only at start.

- `GET /api/settings`: the effective values, secrets masked (a flat object);
- `GET /api/settings/registry`: the panel's view of every key (`settings_view.registry`);
- `PUT /api/settings` `{key: value}`: validated, then written to settings.json; answers with the
  registry, so the panel can redraw. Secrets are write-only: no response ever carries one;
- `POST /api/worker/restart`: 202, then the worker restarts itself on the same port (`restart.py`).
"""

from __future__ import annotations

from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem import settings
from claude_mem.worker import restart, settings_view
from claude_mem.worker.routes_common import ctx_of, json_body, params


def effective(data_dir: str) -> dict[str, object]:
    return settings.masked(settings.load(data_dir))


async def get_settings(request: Request) -> Response:
    params(request, ())
    return JSONResponse(effective(ctx_of(request).data_dir))


async def get_registry(request: Request) -> Response:
    """`{items, restart_needed, warnings}` (see `settings_view.registry`)."""
    params(request, ())
    ctx = ctx_of(request)
    return JSONResponse(settings_view.registry(ctx.data_dir, ctx.settings))


async def put_settings(request: Request) -> Response:
    """Validate and write `{key: value}` (nothing is written when one is refused); answers with the
    registry and the keys `changed`. A bad value is a 422 with the reason; a key the environment sets
    is a 409 (settings.json cannot override it)."""
    params(request, ())
    changes = await json_body(request)
    if not isinstance(changes, dict) or not changes:
        raise HTTPException(400, "expected a non-empty JSON object of settings")
    ctx = ctx_of(request)
    overridden = settings_view.env_set(list(changes), ctx.data_dir)
    if overridden:
        raise HTTPException(409, f"{', '.join(overridden)}: set in the environment"
                                 f" ({', '.join(settings.ENV_PREFIX + key.upper() for key in overridden)}),"
                                 " which overrides settings.json; nothing was written")
    try:
        settings.update_file(changes, ctx.data_dir)
    except settings.SettingsError as exc:
        raise HTTPException(422, str(exc)) from exc
    return JSONResponse({**settings_view.registry(ctx.data_dir, ctx.settings), "changed": sorted(changes)})


async def restart_worker(request: Request) -> Response:
    """202 `{restarting, port}`; once the answer is sent the worker shuts down gracefully and a new
    one takes its place on `port` (this port unless `worker_port` was changed) and data dir."""
    params(request, ())
    ctx = ctx_of(request)
    if ctx.shutdown is None:
        raise HTTPException(409, "this worker does not run as a daemon and cannot restart itself")
    port = restart.request(ctx)
    return JSONResponse({"restarting": True, "port": port}, status_code=202, background=BackgroundTask(ctx.shutdown))


ROUTES = [
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings", put_settings, methods=["PUT"]),
    Route("/api/settings/registry", get_registry, methods=["GET"]),
    Route("/api/worker/restart", restart_worker, methods=["POST"]),
]
