"""`GET /api/team`: team memory as this worker sees it (DESIGN §12) — whether it is on and connected,
the outbox, the last error (no secret), and the teammates whose memory is here (the viewer's author
filter)."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem.store import Store, team
from claude_mem.worker import routes_common as common


async def team_route(request: Request) -> Response:
    common.params(request, ())
    ctx = common.ctx_of(request)
    status = await asyncio.to_thread(ctx.team_status) if ctx.team_status else {"enabled": False}

    def work(conn: Store) -> list[dict[str, object]]:
        return team.authors(conn)

    return JSONResponse({**status, "authors": await common.reading(request, work)})


ROUTES = [Route("/api/team", team_route, methods=["GET"])]
