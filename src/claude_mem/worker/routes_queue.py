"""The observer's queue: what waits, what failed and why (`GET /api/queue`), and retrying it."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from claude_mem.domain import EVENT_STATUSES
from claude_mem.observer.report import observer_report
from claude_mem.store import Store
from claude_mem.store import queue as event_queue
from claude_mem.worker import routes_common as common

STATUS_GROUPS = {
    **{status: (status,) for status in EVENT_STATUSES},
    "open": ("pending", "claimed", "failed"),
    "all": EVENT_STATUSES,
}
MAX_EVENTS = 1000


async def list_queue(request: Request) -> Response:
    """`{counts, next_retry_at, items}`: events with `status` (a status, `open` (default) or `all`), oldest first."""
    query = common.params(request, ("status", "session", "limit"))
    status = str(common.choice(query, "status", STATUS_GROUPS, "open"))
    limit = common.integer(query, "limit", 100, 1, MAX_EVENTS)
    ctx = common.ctx_of(request)

    def work(conn: Store) -> list[dict[str, object]]:
        return event_queue.list_events(conn, STATUS_GROUPS[status], limit=limit, session=query.get("session") or None)

    items = await common.reading(request, work)
    report = await run_in_threadpool(observer_report, ctx.data_dir)
    return JSONResponse({"counts": report["queue"], "next_retry_at": report["next_retry_at"], "items": items})


async def retry_queue(request: Request) -> Response:
    """`{ids: [...]}` or `{all: true}` → `{requeued, counts}`; failed events get fresh attempts."""
    common.params(request, ())
    body = await common.json_body(request)
    if not isinstance(body, dict) or len(body) != 1 or not ({"ids", "all"} & set(body)):
        raise HTTPException(400, 'expected {"ids": [...]} or {"all": true}')
    if "all" in body and body["all"] is not True:
        raise HTTPException(400, '"all" must be true')
    ids = None if "all" in body else common.id_list(body["ids"])

    def work(conn: Store) -> tuple[int, dict[str, int]]:
        return event_queue.retry(conn, ids), event_queue.queue_counts(conn)

    requeued, counts = await common.writing(request, work)
    if requeued:
        common.ctx_of(request).bus.publish("queue", counts)
    return JSONResponse({"requeued": requeued, "counts": counts})


ROUTES = [
    Route("/api/queue", list_queue, methods=["GET"]),
    Route("/api/queue/retry", retry_queue, methods=["POST"]),
]
