"""`GET /api/failures`: recurring failures per project with their count, last seen, excerpts and the fix
that resolved them (issue 31; `recall.failures.listing`), for the viewer's Failures section."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem.recall import failures
from claude_mem.store import Store
from claude_mem.worker import routes_common as common


async def list_failures(request: Request) -> Response:
    """`project` (key, name or path), `min` (times seen, default 2), `limit` (default 50) -> `{failures}`."""
    query = common.params(request, ("project", "min", "limit"))
    minimum = common.integer(query, "min", 2, 1, 1_000_000)
    limit = common.integer(query, "limit", 50, 1, 500)

    def work(conn: Store) -> dict[str, Any]:
        return {"failures": failures.listing(conn, common.project(conn, query.get("project")), minimum, limit)}

    return JSONResponse(await common.reading(request, work))


ROUTES = [Route("/api/failures", list_failures, methods=["GET"])]
