"""What every API route shares: strict query parameters, JSON bodies, and SQLite off the event loop.

Routes raise `HTTPException` (or let `RecallError` through); `app.py` turns both into
`{"error": {"code", "message"}}` with the right status, in one place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request

from claude_mem.domain import MAX_ID, parse_time
from claude_mem.index.query import DEFAULT_KINDS, MAX_LIMIT, SearchQuery
from claude_mem.recall.common import RecallError, resolve_project
from claude_mem.store import Store
from claude_mem.store.search import project_is_stored
from claude_mem.worker import bodies
from claude_mem.worker.context import WorkerContext

T = TypeVar("T")
MAX_BODY = bodies.MAX_BODY
MAX_IDS = MAX_LIMIT
PAGING = ("limit", "offset")
_ID = re.compile(r"[0-9]{1,18}")


def ctx_of(request: Request) -> WorkerContext:
    ctx: WorkerContext = request.app.state.ctx
    return ctx


def params(request: Request, allowed: Iterable[str]) -> dict[str, str]:
    """The query parameters, refusing any the route does not know (a typo must not pass silently)."""
    known = set(allowed)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise HTTPException(400, f"unknown query parameter(s) {', '.join(unknown)}"
                                 f" (this route takes: {', '.join(sorted(known)) or 'none'})")
    return {key: value for key, value in request.query_params.items()}


def integer(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    if not re.fullmatch(r"-?[0-9]{1,18}", raw.strip()):
        raise HTTPException(400, f"{name} must be an integer {low}..{high}, not {raw[:40]!r}")
    value = int(raw)
    if not low <= value <= high:
        raise HTTPException(400, f"{name} must be {low}..{high}, not {value}")
    return value


def paging(query: dict[str, str], default_limit: int = 20, max_limit: int = MAX_LIMIT) -> tuple[int, int]:
    return integer(query, "limit", default_limit, 1, max_limit), integer(query, "offset", 0, 0, 10**9)


def choice(query: dict[str, str], name: str, options: Iterable[str], default: str | None = None) -> str | None:
    value = query.get(name) or default
    options = tuple(options)
    if value is not None and value not in options:
        raise HTTPException(400, f"{name} must be one of {', '.join(options)}, not {value[:40]!r}")
    return value


def times(query: dict[str, str]) -> tuple[str | None, str | None]:
    """`since` and `until` checked up front, so a bad one is named in the error."""
    for name in ("since", "until"):
        if query.get(name):
            try:
                parse_time(query[name])
            except RecallError as exc:
                raise HTTPException(400, f"{name}: {exc}") from exc
    return query.get("since") or None, query.get("until") or None


def search_query(query: dict[str, str], text: str | None, project: str | None, order: str | None) -> SearchQuery:
    """The `SearchQuery` of a route's filter and paging parameters (`type` and `kind` comma-separated,
    `snippets` true, the default, or false).

    `SearchQuery.build` checks every value; its `RecallError` becomes a 400 naming the bad one.
    """
    limit, offset = paging(query)
    snippets = choice(query, "snippets", ("true", "false"), "true") == "true"
    return SearchQuery.build(
        text, mode=query.get("mode"), project=project, types=query.get("type"), since=query.get("since"),
        until=query.get("until"), file=query.get("file"), concept=query.get("concept"),
        author=query.get("author"), kinds=query.get("kind") or DEFAULT_KINDS, limit=limit, offset=offset, order=order,
        snippets=snippets,
    )


def row_id(raw: str, what: str = "observation") -> int:
    if not _ID.fullmatch(raw or ""):
        raise HTTPException(400, f"not an {what} id: {raw[:40]!r} (a positive integer)")
    return int(raw)


def project(conn: Store, value: str | None) -> str | None:
    """A project key from a key, display name or path; an absolute key with nothing stored yet is kept.
    A key that rows are stored under is taken as it is (index lookups; no list of every project)."""
    if not value:
        return None
    if project_is_stored(conn, value):
        return value
    try:
        return resolve_project(conn, value)
    except RecallError:
        if value.startswith("/"):
            return value
        raise


async def json_body(request: Request) -> object:
    """The request's JSON body, as `bodies.BodyGuard` read, bounded and parsed it before routing:
    415 unless JSON, 413 when over `MAX_BODY`, 400 when missing, unreadable or nested too deep."""
    kept = bodies.value_of(request.scope)
    if kept is None:  # an app without the guard (it is in `create_app`'s): the same checks, here
        if not bodies.is_json(request.headers.get("content-type")):
            raise HTTPException(415, "send a JSON body with Content-Type: application/json")
        try:
            raw = await bodies.read(request.headers, request.receive)
            kept = bodies.parse(raw) if raw else bodies.NO_BODY
        except bodies.BodyRefused as refused:
            raise HTTPException(refused.status, refused.message) from None
    if kept is bodies.NO_BODY:
        raise HTTPException(400, "this route needs a JSON body (Content-Type: application/json)")
    return kept


def id_list(value: object, name: str = "ids") -> list[int]:
    """A non-empty JSON list of positive integer ids (at most `MAX_IDS`)."""
    if not isinstance(value, list) or not value:
        raise HTTPException(400, f"{name} must be a non-empty list of ids")
    if len(value) > MAX_IDS:
        raise HTTPException(400, f"at most {MAX_IDS} {name} per request")
    if not all(isinstance(item, int) and not isinstance(item, bool) and 0 < item <= MAX_ID for item in value):
        raise HTTPException(400, f"{name} must be positive integers (at most {MAX_ID})")
    return list(value)


async def reading(request: Request, work: Callable[[Store], T]) -> T:
    """Run `work` on a read-only connection (one of the worker's kept ones, no other thread's at the
    same time), in a thread (the event loop stays free)."""
    readers = ctx_of(request).readers

    def run() -> T:
        identity, conn = readers.borrow()
        try:
            return work(conn)
        finally:
            readers.give_back(identity, conn)

    return await run_in_threadpool(run)


async def writing(request: Request, work: Callable[[Store], T]) -> T:
    """Run `work` on a worker connection (long busy timeout; it opens its own transactions), in a thread."""
    ctx = ctx_of(request)

    def run() -> T:
        conn = ctx.connect()
        try:
            return work(conn)
        finally:
            conn.close()

    return await run_in_threadpool(run)
