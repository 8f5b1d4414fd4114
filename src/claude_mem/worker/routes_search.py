"""Finding things: search, timeline, the project catalog, store counters and the context preview."""

from __future__ import annotations

import sqlite3

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem import settings
from claude_mem.recall import context as session_context
from claude_mem.recall import lists
from claude_mem.recall.search import KINDS, ORDERS, search
from claude_mem.recall.timeline import MAX_SIDE, timeline
from claude_mem.store import stats
from claude_mem.worker import routes_common as common

CONTEXT_SOURCES = ("startup", "resume", "clear", "compact")
MAX_QUERY = 1000


async def search_route(request: Request) -> Response:
    """`{items, total, match, limit, offset}`: BM25-ranked rows (`kind`, `ref`, title, snippet, …)."""
    query = common.params(request, ("q", "project", "type", "since", "until", "file", "concept", "kind", "order",
                                    *common.PAGING))
    text = (query.get("q") or "").strip()
    if not text:
        raise HTTPException(400, "q is required: one or more words to search for")
    if len(text) > MAX_QUERY:
        raise HTTPException(400, f"q is over {MAX_QUERY} characters")
    limit, offset = common.paging(query)
    wanted_types = common.types(query)
    since, until = common.times(query)
    order = str(common.choice(query, "order", ORDERS, "relevance"))
    kinds = tuple(part.strip() for part in (query.get("kind") or "observation").split(",") if part.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise HTTPException(400, f"kind must be among {', '.join(KINDS)} (comma-separated)")

    def work(conn: sqlite3.Connection) -> dict:
        return search(conn, text, project=common.project(conn, query.get("project")), types=wanted_types,
                      since=since, until=until, file=query.get("file") or None,
                      concept=query.get("concept") or None, kinds=kinds, limit=limit, offset=offset, order=order)

    return JSONResponse({**await common.reading(request, work), "limit": limit, "offset": offset})


async def timeline_route(request: Request) -> Response:
    """`{anchor, project, items}` around `anchor` (an id, `S3`, `P7`, an ISO time) or the best match for `q`."""
    query = common.params(request, ("anchor", "q", "before", "after", "project"))
    anchor, words = (query.get("anchor") or "").strip(), (query.get("q") or "").strip()
    if bool(anchor) == bool(words):
        raise HTTPException(400, "give anchor (an id such as 12 or S3, or an ISO time) or q (words), not both")
    if words and len(words) > MAX_QUERY:
        raise HTTPException(400, f"q is over {MAX_QUERY} characters")
    if anchor and not (anchor[0].isdigit() or anchor[0] in "#SsPp"):
        raise HTTPException(400, f"not an anchor: {anchor[:40]!r} (an id such as 12, S3, P7, or an ISO time)")
    before = common.integer(query, "before", 5, 0, MAX_SIDE)
    after = common.integer(query, "after", 5, 0, MAX_SIDE)

    def work(conn: sqlite3.Connection) -> dict:
        return timeline(conn, anchor or words, before, after, common.project(conn, query.get("project")))

    return JSONResponse(await common.reading(request, work))


async def projects_route(request: Request) -> Response:
    """`{items}`: every project with its display name and counts, most recently active first."""
    common.params(request, ())
    return JSONResponse({"items": await common.reading(request, lists.catalog)})


async def stats_route(request: Request) -> Response:
    """Counters: rows per table, events by status, observations by type, database size, the bus."""
    common.params(request, ())
    ctx = common.ctx_of(request)

    def work(conn: sqlite3.Connection) -> dict:
        by_type = dict(conn.execute("SELECT type, COUNT(*) FROM observations GROUP BY type").fetchall())
        projects = conn.execute("SELECT COUNT(DISTINCT project) FROM sessions").fetchone()[0]
        return {"counts": stats.store_counts(conn), "observations_by_type": by_type, "projects": projects}

    counted = await common.reading(request, work)
    return JSONResponse({
        **counted,
        "database_bytes": stats.database_bytes(ctx.db_path),
        "stream": {"subscribers": ctx.bus.subscriber_count, "published": ctx.bus.published},
        "uptime": round(ctx.uptime, 3),
    })


async def context_route(request: Request) -> Response:
    """The context a session starting in `project` would receive: `{text, system_message, …, hook_output}`."""
    query = common.params(request, ("project", "source", "session"))
    if not query.get("project"):
        raise HTTPException(400, "project is required (a project key, display name or path)")
    source = str(common.choice(query, "source", CONTEXT_SOURCES, "startup"))
    session = query.get("session") or None
    if session and source != "resume":
        raise HTTPException(400, "session is only used with source=resume")
    data_dir = common.ctx_of(request).data_dir
    values = settings.load(data_dir)

    def work(conn: sqlite3.Connection) -> dict:
        key = common.project(conn, query["project"])
        assert key is not None
        since = session_context.last_injection(conn, session) if session else None
        result = session_context.build(conn, key, source, since, values, data_dir)
        return {"project": key, **result, "hook_output": session_context.hook_output(result)}

    return JSONResponse(await common.reading(request, work))


ROUTES = [
    Route("/api/search", search_route, methods=["GET"]),
    Route("/api/timeline", timeline_route, methods=["GET"]),
    Route("/api/projects", projects_route, methods=["GET"]),
    Route("/api/stats", stats_route, methods=["GET"]),
    Route("/api/context", context_route, methods=["GET"]),
]
