"""Every request body the worker reads goes through here, once, before routing (issue 33, item 7).

`BodyGuard` is pure ASGI middleware: for a request that may carry a body (POST, PUT, PATCH, DELETE)
it reads the body as it arrives (refused at `MAX_BODY` bytes without reading the rest), and a
non-empty one must be JSON: `application/json`, valid UTF-8 JSON, nested at most `MAX_DEPTH` levels,
no unpaired surrogate in any string. What is refused gets a 400 (413 too large, 415 not JSON) with
`{"error": {"code", "message"}}` before any route runs, so a route added later is covered too and no
parser deep inside a route meets a 5,000-level body. What passes is kept in the request's state
(`parsed`) and replayed to the route, which reads it with `routes_common.json_body` — parsed once.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 64 * 1024
MAX_DEPTH = 32  # the API's bodies are 2 levels deep ({"ids": [...]}); settings values are scalars
WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})
STATE_KEY = "claude_mem_body"
NO_BODY = object()  # what the state holds for a request without a body


class BodyRefused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == "application/json"


def parse(body: bytes) -> object:
    """The JSON value of `body`, or `BodyRefused` (400) saying what is wrong with it."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise BodyRefused(400, "bad_request", f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # bad JSON, bad UTF-8
        raise BodyRefused(400, "bad_request", f"not JSON: {str(exc)[:200]}") from None
    check_shape(value)
    return value


def check_shape(value: object) -> None:
    """Refuse nesting past `MAX_DEPTH` and strings (keys too) that are not valid Unicode text; iterative."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _text(item)
            continue
        if not isinstance(item, (list, dict)):
            continue
        if depth > MAX_DEPTH:
            raise BodyRefused(400, "bad_request", f"JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                _text(key)
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def _text(value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BodyRefused(400, "bad_request", "the JSON holds a string that is not valid text"
                                              " (an unpaired surrogate such as \\ud800)") from None


async def read(headers: Headers, receive: Receive) -> bytes:
    """The whole body, refused at `MAX_BODY` bytes: by its declared length, or as a chunked body grows."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise BodyRefused(413, "too_large", f"request body over {MAX_BODY} bytes")
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            break
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            raise BodyRefused(413, "too_large", f"request body over {MAX_BODY} bytes")
        if not message.get("more_body", False):
            break
    return bytes(body)


def value_of(scope: MutableMapping[str, Any]) -> object:
    """What `BodyGuard` kept for this request: the parsed JSON, `NO_BODY`, or None when it did not run."""
    return scope.get("state", {}).get(STATE_KEY)


class BodyGuard:
    """Read, bound and parse every request body before routing; refuse a bad one with a JSON error."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in WITH_BODY:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            body = await read(headers, receive)
            if not body:
                value: object = NO_BODY
            elif not is_json(headers.get("content-type")):
                raise BodyRefused(415, "unsupported_media_type", "send a JSON body with Content-Type: application/json")
            else:
                value = parse(body)
        except BodyRefused as refused:
            await respond(send, refused)
            return
        scope.setdefault("state", {})[STATE_KEY] = value
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect, as the server would

        await self.app(scope, replay, send)


async def respond(send: Send, refused: BodyRefused) -> None:
    payload = json.dumps({"error": {"code": refused.code, "message": refused.message}}).encode()
    await send({"type": "http.response.start", "status": refused.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
