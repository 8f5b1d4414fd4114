"""`GET /stream`: Server-Sent Events from the worker's bus: every write to memory as it happens.

Each event is `event: <kind>` with `data: <the JSON row>`. `observation`, `summary` and `prompt` carry
a row added or changed (`op` `insert` or `update`), and `forget` (`{observations, summaries, prompts,
sessions, project}`) what left the database, so a viewer drops those rows — whichever process wrote
it: the observer, a hook, the CLI (`remember`, `forget`, imports, `projects merge`) or team
replication, all seen through the change log (`worker.change_feed`) within a second; private prompts
never. `queue` carries the queue's counts and `health` the `/health` report. A new client first gets
one `health` event, then live events; a comment line every `HEARTBEAT_SECONDS` keeps proxies and
browsers from timing out, and `: dropped N` tells a client that fell behind how many events it lost.
The stream ends when the client goes away or the worker shuts down (the bus closes), so it never
holds up a shutdown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from claude_mem.worker import routes_common as common
from claude_mem.worker.bus import KINDS, Subscription
from claude_mem.worker.health import health_report

HEARTBEAT_SECONDS = 15.0
RECONNECT_MS = 3000


def frame(kind: str, data: object) -> str:
    """One SSE event; the JSON has no raw newlines, so it is a single `data:` line."""
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def frames(subscription: Subscription, first: dict[str, object] | None, heartbeat: float) -> AsyncIterator[str]:
    try:
        yield f"retry: {RECONNECT_MS}\n: claude-mem stream\n\n"
        if first is not None:
            yield frame("health", first)
        reported = 0
        while True:
            try:
                event = await asyncio.wait_for(subscription.__anext__(), heartbeat)
            except TimeoutError:
                yield ": heartbeat\n\n"
                continue
            except StopAsyncIteration:
                return
            if subscription.dropped > reported:
                yield f": dropped {subscription.dropped - reported}\n\n"
                reported = subscription.dropped
            yield frame(event.kind, event.data)
    finally:
        subscription.close()


async def stream(request: Request) -> Response:
    """Live events; `?kinds=observation,summary` narrows them (default: every kind)."""
    query = common.params(request, ("kinds",))
    kinds = tuple(part.strip() for part in (query.get("kinds") or ",".join(KINDS)).split(",") if part.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise HTTPException(400, f"kinds must be among {', '.join(KINDS)} (comma-separated)")
    ctx = common.ctx_of(request)
    first = await health_report(ctx) if "health" in kinds else None
    subscription = ctx.bus.subscribe(kinds)
    return StreamingResponse(
        frames(subscription, first, HEARTBEAT_SECONDS), media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
    )


ROUTES = [Route("/stream", stream, methods=["GET"])]
