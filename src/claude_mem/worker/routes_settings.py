"""`GET /api/settings` (secrets masked) and `PUT /api/settings` (secrets write-only)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem import settings
from claude_mem.worker.routes_common import json_body


def effective(data_dir: str) -> dict[str, object]:
    return settings.masked(settings.load(data_dir))


async def get_settings(request: Request) -> Response:
    return JSONResponse(effective(request.app.state.ctx.data_dir))


async def put_settings(request: Request) -> Response:
    """Validate and write `{key: value}`; takes effect for new processes (the worker keeps its own)."""
    changes = await json_body(request)
    if not isinstance(changes, dict) or not changes:
        raise HTTPException(400, "expected a non-empty JSON object of settings")
    data_dir = request.app.state.ctx.data_dir
    try:
        settings.update_file(changes, data_dir)
    except settings.SettingsError as exc:
        raise HTTPException(422, str(exc)) from exc
    return JSONResponse(effective(data_dir))


ROUTES = [
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings", put_settings, methods=["PUT"]),
]
