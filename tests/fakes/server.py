"""A threaded stdlib HTTP server on 127.0.0.1 with a request log and scriptable faults.

Subclasses implement `route(request) -> None` and answer with the `send_*` helpers. Every request is
logged (headers with secrets masked, parsed body) so tests assert on what the client really sent.
Faults are queued per test and consumed one per matching request, before the normal route runs.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

SECRET_HEADERS = ("authorization", "x-api-key", "api-key")


def mask_header(name: str, value: str) -> str:
    """Keep the auth scheme and length visible, never the secret itself."""
    if name.lower() not in SECRET_HEADERS:
        return value
    scheme = value.split(" ", 1)[0] + " " if " " in value else ""
    return f"{scheme}***({len(value)} chars)"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw_size: int
    fault: str = ""


@dataclass
class Fault:
    """One scripted misbehaviour: `kind` is status | timeout | truncate | garbage | drop."""

    kind: str
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    match: str = ""  # only requests whose path contains this


class Handler(BaseHTTPRequestHandler):
    server: FakeHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _read(self) -> tuple[Any, int]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return (json.loads(raw) if raw else None), len(raw)
        except ValueError:
            return raw.decode("utf-8", "replace"), len(raw)

    def _handle(self) -> None:
        body, size = self._read()
        parts = urlsplit(self.path)
        request = Recorded(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): mask_header(k, v) for k, v in self.headers.items()},
            body=body,
            raw_size=size,
        )
        self.raw_headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.server.fake
        fault = fake.take_fault(request.path)
        if fault is not None:
            request.fault = fault.kind
        fake.record(request)
        try:
            if fault is not None and fake.apply_fault(self, fault, request):
                return
            fake.route(self, request)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _handle

    # -- answer helpers ------------------------------------------------------------------------
    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_truncated_json(self, payload: Any) -> None:
        """Promise the whole body, send the first half, hang up."""
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True

    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_sse(self, data: Any, event: str | None = None) -> None:
        text = (f"event: {event}\n" if event else "") + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()


class FakeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), Handler)


class FakeServer:
    """Base of the fakes: start/stop, request log, fault queue."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.faults: deque[Fault] = deque()
        self.lock = threading.Lock()
        self.httpd: FakeHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> FakeServer:
        self.httpd = FakeHTTPServer(self)
        self.thread = threading.Thread(target=self.httpd.serve_forever, name=type(self).__name__, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self.httpd is not None, "fake not started"
        return self.httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # log and faults
    def record(self, request: Recorded) -> None:
        with self.lock:
            self.requests.append(request)

    def posts(self, path_part: str = "") -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.method == "POST" and path_part in r.path]

    def inject(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def take_fault(self, path: str) -> Fault | None:
        with self.lock:
            for fault in list(self.faults):
                if fault.match in path:
                    self.faults.remove(fault)
                    return fault
        return None

    def apply_fault(self, handler: Handler, fault: Fault, request: Recorded) -> bool:
        """Misbehave; True when the request is fully handled. `truncate` is left to the route."""
        if fault.kind == "status":
            handler.send_json(fault.status, fault.body or {"error": {"message": f"injected {fault.status}"}}, fault.headers)
            return True
        if fault.kind == "timeout":
            time.sleep(fault.delay)
            handler.close_connection = True
            return True
        if fault.kind == "garbage":
            data = b"<html>502 Bad Gateway</html> {not json"
            handler.send_response(200)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return True
        if fault.kind == "drop":
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return True
        return False

    def route(self, handler: Handler, request: Recorded) -> None:
        raise NotImplementedError
