"""What is stored, record by record: observations, summaries, prompts, sessions — list and fetch
(forgetting them is `routes_forget`)."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem.index.search import search
from claude_mem.recall import freshness, lists, records
from claude_mem.store import Store
from claude_mem.worker import routes_common as common

LIST_PARAMS = ("project", "since", "until", *common.PAGING)
MAX_SESSION_ID = 1000


async def list_observations(request: Request) -> Response:
    """`{items, total, limit, offset}`: full observations matching the filters, newest first."""
    query = common.params(request, (*LIST_PARAMS, "type", "file", "concept", "author", "order"))
    order = str(common.choice(query, "order", ("newest", "oldest"), "newest"))

    def work(conn: Store) -> dict[str, object]:
        wanted = common.search_query(query, None, common.project(conn, query.get("project")), order)
        found = search(conn, wanted)
        freshness.on_hits(conn, found.items, rank=False)
        full = records.get_observations(conn, [item["id"] for item in found.items], count_fetch=False)
        fresh = {hit["id"]: {name: hit[name] for name in ("freshness", "changed_files") if name in hit}
                 for hit in found.items}
        return {"items": [{"kind": "observation", "ref": f"#{item['id']}", **item, **fresh.get(item["id"], {})}
                          for item in full],
                "total": found.total, "limit": wanted.limit, "offset": wanted.offset}

    return JSONResponse(await common.reading(request, work))


async def get_observation(request: Request) -> Response:
    """One observation in full; counts as a fetch (like `claude-mem show`)."""
    common.params(request, ())
    wanted = common.row_id(request.path_params["id"])
    found = await common.writing(request, lambda conn: records.get_many(conn, [str(wanted)]))
    return JSONResponse(found[0])


async def observations_batch(request: Request) -> Response:
    """`{ids: [...]}` → `{items, missing}`; ids may be observation ids or refs like `S3`, `P7`."""
    common.params(request, ())
    body = await common.json_body(request)
    if not isinstance(body, dict) or set(body) != {"ids"}:
        raise HTTPException(400, 'expected {"ids": [...]}')
    ids = body["ids"]
    if not isinstance(ids, list) or not ids or len(ids) > common.MAX_IDS:
        raise HTTPException(400, f"ids must be a list of 1..{common.MAX_IDS} ids")
    if not all(isinstance(i, str) or (isinstance(i, int) and not isinstance(i, bool) and i > 0) for i in ids):
        raise HTTPException(400, "ids must be positive integers or refs such as S3 and P7")
    found, missing = await common.writing(request, lambda conn: records.fetch(conn, [str(i) for i in ids]))
    return JSONResponse({"items": found, "missing": missing})


async def list_summaries(request: Request) -> Response:
    query = common.params(request, LIST_PARAMS)
    limit, offset = common.paging(query)
    since, until = common.times(query)

    def work(conn: Store) -> dict[str, Any]:
        return lists.summaries(conn, common.project(conn, query.get("project")), since, until, limit, offset)

    return JSONResponse({**await common.reading(request, work), "limit": limit, "offset": offset})


async def list_prompts(request: Request) -> Response:
    query = common.params(request, (*LIST_PARAMS, "session"))
    limit, offset = common.paging(query)
    since, until = common.times(query)

    def work(conn: Store) -> dict[str, Any]:
        return lists.prompts(conn, common.project(conn, query.get("project")), since, until, limit, offset,
                             session=query.get("session") or None)

    return JSONResponse({**await common.reading(request, work), "limit": limit, "offset": offset})


async def list_sessions(request: Request) -> Response:
    query = common.params(request, (*LIST_PARAMS, "status"))
    limit, offset = common.paging(query)
    since, until = common.times(query)
    status = common.choice(query, "status", lists.SESSION_STATUSES)

    def work(conn: Store) -> dict[str, Any]:
        return lists.sessions(conn, common.project(conn, query.get("project")), since, until, limit, offset,
                              status=status)

    return JSONResponse({**await common.reading(request, work), "limit": limit, "offset": offset})


async def get_session(request: Request) -> Response:
    """`{session, items, truncated}`: a session (by its Claude Code id) and its prompts, observations
    and summaries in story order (see `lists.session_story`)."""
    common.params(request, ())
    session = request.path_params["id"]
    if not 0 < len(session) <= MAX_SESSION_ID:
        raise HTTPException(400, f"a session id is 1..{MAX_SESSION_ID} characters")
    return JSONResponse(await common.reading(request, lambda conn: lists.session_story(conn, session)))


ROUTES = [
    Route("/api/observations", list_observations, methods=["GET"]),
    Route("/api/observations/batch", observations_batch, methods=["POST"]),
    Route("/api/observations/{id}", get_observation, methods=["GET"]),
    Route("/api/summaries", list_summaries, methods=["GET"]),
    Route("/api/prompts", list_prompts, methods=["GET"]),
    Route("/api/sessions", list_sessions, methods=["GET"]),
    Route("/api/sessions/{id:path}", get_session, methods=["GET"]),
]
