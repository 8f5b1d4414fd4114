"""Finding things: search, timeline, the project catalog, store counters and the context preview."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem import settings
from claude_mem.index.search import search
from claude_mem.recall import context as session_context
from claude_mem.recall import freshness, lists, related, usage
from claude_mem.recall.prompt_context import MAX_RELATED
from claude_mem.recall.timeline import MAX_SIDE, Timeline, timeline
from claude_mem.store import Store, stats
from claude_mem.worker import routes_common as common

CONTEXT_SOURCES = ("startup", "resume", "clear", "compact")
MAX_QUERY = 1000


async def search_route(request: Request) -> Response:
    """`{items, total, total_capped, match, limit, offset}`: BM25-ranked rows (`kind`, `ref`, title, snippet, …);
    `total` is exact unless `total_capped` (then at least that many match: see `SearchResult`); a keyword
    hit's snippet highlights the matched words unless `snippets=false`."""
    query = common.params(request, ("q", "project", "type", "since", "until", "file", "concept", "author", "kind", "mode",
                                    "order", "snippets", *common.PAGING))
    text = (query.get("q") or "").strip()
    if not text:
        raise HTTPException(400, "q is required: one or more words to search for")
    if len(text) > MAX_QUERY:
        raise HTTPException(400, f"q is over {MAX_QUERY} characters")

    def work(conn: Store) -> dict[str, object]:
        wanted = common.search_query(query, text, common.project(conn, query.get("project")), query.get("order"))
        found = search(conn, wanted)
        freshness.on_hits(conn, found.items, wanted.order == "relevance")
        return {**found.as_dict(), "limit": wanted.limit, "offset": wanted.offset}

    return JSONResponse(await common.reading(request, work))


async def related_route(request: Request) -> Response:
    """`{prompt, project, session?, limit?}` → `{items, mode}`: what the prompt hook adds to a prompt.

    Observations of `project` (a project key) that match the prompt well, minus those `session` has
    already been shown; `items` may well be empty.
    """
    common.params(request, ())
    body = await common.json_body(request)
    if not isinstance(body, dict) or not {"prompt", "project"} <= set(body) <= {"prompt", "project", "session", "limit"}:
        raise HTTPException(400, 'expected {"prompt": "...", "project": "...", "session": "...", "limit": 3}')
    prompt, key, session, limit = body["prompt"], body["project"], body.get("session") or "", body.get("limit", 3)
    if not isinstance(prompt, str) or not isinstance(key, str) or not key or not isinstance(session, str):
        raise HTTPException(400, "prompt and project must be text (project a project key), session text or absent")
    if len(key) > MAX_QUERY or len(session) > MAX_QUERY:
        raise HTTPException(400, f"project and session are at most {MAX_QUERY} characters")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= MAX_RELATED:
        raise HTTPException(400, f"limit must be a whole number from 0 to {MAX_RELATED}")
    if not prompt.strip() or not limit:
        return JSONResponse({"items": [], "mode": ""})
    return JSONResponse(await common.reading(request, lambda conn: related.related(conn, key, prompt, session, limit)))


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

    def work(conn: Store) -> Timeline:
        return timeline(conn, anchor or words, before, after, common.project(conn, query.get("project")))

    return JSONResponse(await common.reading(request, work))


async def projects_route(request: Request) -> Response:
    """`{items}`: every project with its display name and counts, most recently active first."""
    common.params(request, ())
    return JSONResponse({"items": await common.reading(request, lists.catalog)})


async def stats_route(request: Request) -> Response:
    """Counters (rows per table, events by status, observations by type, database size, the bus) and
    `usage`: what memory cost and saved over the last `days` (1..366, default 30) UTC days, for
    `project` (a key, display name or path) or every project (see `recall.usage`); `in_use`: what the
    sessions of those days were shown and used (`recall.usage.in_use`, issue 30)."""
    query = common.params(request, ("project", "days"))
    days = common.integer(query, "days", 30, 1, usage.MAX_DAYS)
    ctx = common.ctx_of(request)
    values = settings.load(ctx.data_dir)

    def work(conn: Store) -> dict[str, Any]:
        key = common.project(conn, query.get("project"))
        return {"counts": stats.store_counts(conn), "observations_by_type": stats.observations_by_type(conn),
                "projects": stats.project_count(conn), "usage": usage.usage(conn, key, days, values, ctx.data_dir),
                "in_use": usage.in_use(conn, key, days)}

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

    def work(conn: Store) -> dict[str, Any]:
        key = common.project(conn, query["project"])
        assert key is not None
        result = session_context.for_session(conn, key, source, session, values, data_dir)
        return {"project": key, **result, "hook_output": session_context.hook_output(result)}

    return JSONResponse(await common.reading(request, work))


ROUTES = [
    Route("/api/search", search_route, methods=["GET"]),
    Route("/api/related", related_route, methods=["POST"]),
    Route("/api/timeline", timeline_route, methods=["GET"]),
    Route("/api/projects", projects_route, methods=["GET"]),
    Route("/api/stats", stats_route, methods=["GET"]),
    Route("/api/context", context_route, methods=["GET"]),
]
