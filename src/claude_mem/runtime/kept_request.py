"""GETs to the worker over one kept HTTP/1.1 connection per thread, for a process that asks it many times
(the MCP server). Stdlib only, on `_socket` like `discovery.request_json`: `http.client` parses each
answer's headers through the `email` package, a few hundred microseconds of a ~10 ms search.

The worker closes a connection idle for 5 s (uvicorn's keep-alive timeout): a kept connection that
turns out closed before any byte of the answer is made anew, once.
"""

from __future__ import annotations

import _socket
import json
import threading
import time
from typing import Any

MAX_ANSWER = 8_000_000  # bytes (500 hits with snippets fit)


class _Kept(threading.local):
    sock: _socket.socket | None = None
    port = 0


_kept = _Kept()


class _Stale(Exception):
    """The kept connection was closed by the worker before the answer began."""


def forget() -> None:
    """Close this thread's kept connection, if any."""
    if _kept.sock is not None:
        _kept.sock.close()
    _kept.sock = None


def kept_connection() -> object | None:
    """This thread's kept connection (an opaque handle: whether the next request reuses it)."""
    return _kept.sock


def get_json(port: int, path: str, timeout: float) -> dict[str, Any] | None:
    """GET `path` from the worker on 127.0.0.1:`port`; the decoded 200 answer, or None on any failure
    (the connection is then dropped). `timeout` bounds the whole exchange."""
    deadline = time.monotonic() + timeout
    for _attempt in (1, 2):
        sock = _kept.sock if _kept.port == port else None
        reused = sock is not None
        try:
            if sock is None:
                forget()
                sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
                _kept.sock, _kept.port = sock, port
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                sock.connect(("127.0.0.1", port))
                sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            answer = _exchange(sock, port, path, deadline, reused)
        except _Stale:
            forget()
            continue
        except (OSError, ValueError, OverflowError):
            forget()
            return None
        return answer if isinstance(answer, dict) else None
    return None


def _exchange(sock: _socket.socket, port: int, path: str, deadline: float, reused: bool) -> object:
    """One request and its answer on `sock`: the decoded JSON body of a 200, else `ValueError`."""
    sock.settimeout(max(deadline - time.monotonic(), 0.001))
    try:
        sock.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json\r\n\r\n"
                     % (path.encode("ascii"), port))
    except (BrokenPipeError, ConnectionResetError):
        if reused:
            raise _Stale() from None
        raise
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = _receive(sock, deadline)
        if not chunk:
            if reused and not received:
                raise _Stale()
            raise ValueError("the worker closed the connection mid-answer")
        received += chunk
        if len(received) > 65_536:
            raise ValueError("no end of headers")
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split()
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    if len(status) < 2 or status[1] != "200" or "chunked" in headers.get("transfer-encoding", "").lower():
        raise ValueError(f"not a plain 200 answer: {lines[0]!r}")
    length = int(headers.get("content-length", "-1"))
    if not 0 <= length <= MAX_ANSWER:
        raise ValueError(f"no usable content-length: {length}")
    while len(body) < length:
        chunk = _receive(sock, deadline)
        if not chunk:
            raise ValueError("the worker closed the connection mid-answer")
        body += chunk
    if headers.get("connection", "").lower() == "close":
        forget()
    return json.loads(body[:length])


def _receive(sock: _socket.socket, deadline: float) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the worker did not answer in time")
    sock.settimeout(left)
    try:
        return sock.recv(65_536)
    except ConnectionResetError:
        return b""
