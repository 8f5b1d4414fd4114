"""Forgetting from the HTTP API: what a forget would remove, and the forget itself.

Every forget goes through `recall.forget` (rows, FTS entries, vectors, freed bytes, backups — the
CLI's guarantees). The response lists what left the database under `removed`; every open viewer
hears of it from the stream's `forget` event, which the change feed publishes for any forget, this
one included (`worker.change_feed`).
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem.domain import RecallError, UnknownRecord
from claude_mem.recall import forget
from claude_mem.store import Store
from claude_mem.worker import routes_common as common

MAX_TARGET = 1000  # characters of a session id or project name
TARGETS = ("observation", "session", "project")


def _text(value: str, what: str) -> str:
    if not 0 < len(value) <= MAX_TARGET:
        raise HTTPException(400, f"a {what} is 1..{MAX_TARGET} characters")
    return value


def _project(conn: Store, value: str) -> str:
    """A project key from a key, display name or path; a name that names nothing is a 404."""
    try:
        key = common.project(conn, _text(value, "project"))
    except UnknownRecord:
        raise
    except RecallError as exc:  # `resolve_project` says "unknown project …" as a plain RecallError
        raise UnknownRecord(str(exc)) from exc
    assert key is not None
    return key


def _plan(conn: Store, target: str, value: str) -> dict[str, Any]:
    if target == "observation":
        return forget.plan(conn, ids=[common.row_id(value)])
    if target == "session":
        return forget.plan(conn, session=_text(value, "session id"))
    return forget.plan(conn, project=_project(conn, value))


async def _forget(request: Request, target: str, value: str) -> Response:
    """Forget; the change feed tells every subscriber of the bus what left the database."""
    ctx = common.ctx_of(request)
    report = await common.writing(request, lambda conn: forget.carry_out(conn, ctx.data_dir, _plan(conn, target, value)))
    return JSONResponse(report)


async def preview(request: Request) -> Response:
    """`?observation=ID` | `?session=CONTENT_SESSION_ID` | `?project=KEY_NAME_OR_PATH` (exactly one)
    → `{describe, counts}`: what forgetting it would remove, removing nothing."""
    query = common.params(request, TARGETS)
    given = [name for name in TARGETS if query.get(name)]
    if len(given) != 1:
        raise HTTPException(400, "give exactly one of observation (an id), session (a Claude Code session id)"
                                 " or project (a key, display name or path)")
    target = given[0]
    planned = await common.reading(request, lambda conn: _plan(conn, target, query[target]))
    return JSONResponse({"describe": planned["describe"], "counts": planned["counts"]})


async def forget_observation(request: Request) -> Response:
    """Forget one observation for good: `{forgot, counts, removed, backups}`."""
    common.params(request, ())
    return await _forget(request, "observation", request.path_params["id"])


async def forget_session(request: Request) -> Response:
    """Forget a Claude Code session (by its content session id) with everything captured in it."""
    common.params(request, ())
    return await _forget(request, "session", request.path_params["id"])


async def forget_project(request: Request) -> Response:
    """Forget everything stored for a project (its key, display name or path)."""
    common.params(request, ())
    return await _forget(request, "project", request.path_params["project"])


ROUTES = [
    Route("/api/forget/preview", preview, methods=["GET"]),
    Route("/api/observations/{id}", forget_observation, methods=["DELETE"]),
    Route("/api/sessions/{id:path}", forget_session, methods=["DELETE"]),
    Route("/api/projects/{project:path}", forget_project, methods=["DELETE"]),
]
