"""Security at the door of every request, before routing (DESIGN §7).

- A `Host` that is not 127.0.0.1/localhost (with any port) is refused: DNS rebinding.
- A request whose `Origin` is present and not the worker's own is refused, whatever its method: CSRF,
  and no side effect (a fetch counted) or read through a victim's browser.
- No CORS headers are ever sent, so other origins cannot read responses.
- Errors are `{"error": {"code", "message"}}` with a proper status; internals never leak.
"""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("claude_mem.worker")

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


def host_is_local(host: str | None) -> bool:
    if not host:
        return False
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name, port = name + "]", rest[1:] if rest.startswith(":") else rest
    else:
        name, _, port = host.partition(":")
    return name in LOCAL_HOSTS and (port == "" or port.isdigit())


def origin_is_own(origin: str, port: int) -> bool:
    """The worker's own origin: http, a local host name, and the worker's port."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme != "http" or "/" in rest:
        return False
    name, _, origin_port = rest.rpartition(":") if not rest.endswith("]") else (rest, "", "")
    return name in LOCAL_HOSTS and origin_port.isdigit() and int(origin_port) == port


def error_body(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


class SecurityMiddleware:
    """Pure ASGI middleware: refuse foreign hosts and origins, add safety headers to every response."""

    def __init__(self, app: ASGIApp, port_of: object) -> None:
        self.app = app
        self.port_of = port_of  # a callable returning the worker's bound port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not host_is_local(headers.get("host")):
            log.warning("refused request with Host %r", headers.get("host"))
            await self.refuse(send, "forbidden_host", "requests must be addressed to 127.0.0.1 or localhost")
            return
        origin = headers.get("origin")
        # Any method: even a GET has effects (an observation read counts a fetch), and a page on
        # another site has no business reading memory through a victim's browser.
        if origin is not None and not origin_is_own(origin, self.port_of()):  # type: ignore[operator]
            log.warning("refused %s %s from Origin %r", scope["method"], scope["path"], origin)
            await self.refuse(send, "forbidden_origin", "cross-origin requests are refused")
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                existing = [(k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control-")]
                message["headers"] = existing + SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)

    @staticmethod
    async def refuse(send: Send, code: str, message: str) -> None:
        body = error_body(code, message)
        await send({
            "type": "http.response.start", "status": 403,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            + SECURITY_HEADERS,
        })
        await send({"type": "http.response.body", "body": body})
