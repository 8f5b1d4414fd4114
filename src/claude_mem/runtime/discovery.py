"""Where the worker is and whether it answers: `worker.json`, `worker.lock`, a `/health` probe.

Stdlib only and import-light: the session-start and user-prompt hooks use it on every call.
"""

from __future__ import annotations

import os

from claude_mem.fastpath import jsontext
from claude_mem.paths import RECOVERY_FILENAME
from claude_mem.paths import WORKER_INFO as INFO_FILENAME
from claude_mem.paths import WORKER_LOCK as LOCK_FILENAME

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Mapping
    from typing import Any


def info_path(data_dir: str) -> str:
    return os.path.join(data_dir, INFO_FILENAME)


def lock_path(data_dir: str) -> str:
    return os.path.join(data_dir, LOCK_FILENAME)


def read_info(data_dir: str) -> dict[str, Any] | None:
    """The worker.json dict, or None when missing or unreadable."""
    try:
        with open(info_path(data_dir), "rb") as handle:
            info = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not isinstance(info.get("pid"), int) or not isinstance(info.get("port"), int):
        return None
    return info


def write_json(path: str, value: Mapping[str, object]) -> None:
    """Write `value` as JSON to `path` atomically (readers never see half a file)."""
    import json

    temp = "%s.%d.tmp" % (path, os.getpid())
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(temp, path)


def write_info(data_dir: str, info: Mapping[str, object]) -> None:
    """Write worker.json atomically."""
    write_json(info_path(data_dir), info)


def remove_info(data_dir: str, pid: int | None = None) -> None:
    """Remove worker.json, only if it still names `pid` when one is given."""
    if pid is not None:
        info = read_info(data_dir)
        if info is not None and info.get("pid") != pid:
            return
    try:
        os.unlink(info_path(data_dir))
    except FileNotFoundError:
        pass


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def try_lock(data_dir: str) -> int | None:
    """Take the exclusive worker lock without waiting: an open fd holding it, or None when held elsewhere."""
    import errno
    import fcntl  # only to take the lock: the hooks read worker.json far more often

    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    fd = os.open(lock_path(data_dir), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


def lock_held(data_dir: str) -> bool:
    """True when some process (a running or starting worker, or a spawner) holds the worker lock."""
    if not os.path.exists(lock_path(data_dir)):
        return False
    fd = try_lock(data_dir)
    if fd is None:
        return True
    os.close(fd)
    return False


def probe_health(port: int, timeout: float = 0.5) -> dict[str, Any] | None:
    """GET /health on 127.0.0.1:port; the decoded JSON, or None on any failure."""
    return request_json(port, "GET", "/health", None, timeout)


def request_json(port: int, method: str, path: str, body: object, timeout: float) -> dict[str, Any] | None:
    """One JSON request to the worker on 127.0.0.1:port; the decoded 200 answer, or None on any failure.

    A raw HTTP/1.0 exchange over a socket of `_socket`, the C module: `http.client` would cost the hook
    ~10 ms of imports, and `socket` itself ~6 ms of CPU (it imports `enum` and `selectors`).
    `timeout` bounds the whole exchange; the answer is read up to 1 MB.
    """
    return read_answer(send_request(port, method, path, body, timeout))


def send_request(port: int, method: str, path: str, body: object, timeout: float) -> tuple[Any, float] | None:
    """The first half of `request_json`: connect and send the request, so that the worker works on it while
    the caller does something else; (the socket, the deadline) for `read_answer`, or None on any failure."""
    import _socket
    import time

    deadline = time.monotonic() + timeout
    payload = b"" if body is None else jsontext.dumps(body).encode()
    head = "%s %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\nAccept: application/json\r\n" % (method, path, port)
    if body is not None:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(payload)
    conn = None
    try:
        conn = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        conn.settimeout(timeout)
        conn.connect(("127.0.0.1", port))
        conn.sendall(head.encode() + b"\r\n" + payload)
    except (OSError, ValueError, OverflowError):  # refused, timed out, reset; a port out of range
        if conn is not None:
            conn.close()
        return None
    return conn, deadline


def read_answer(sent: tuple[Any, float] | None) -> dict[str, Any] | None:
    """The second half of `request_json`: the decoded 200 answer to what `send_request` sent, read until
    its deadline (None on any failure); the socket is closed either way."""
    import time

    if sent is None:
        return None
    conn, deadline = sent
    chunks: list[bytes] = []
    try:
        try:
            total = 0
            while total < 1_000_000:
                conn.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            conn.close()
    except (OSError, ValueError, OverflowError):  # timed out, reset
        return None
    answer_head, sep, answer = b"".join(chunks).partition(b"\r\n\r\n")
    status_line = answer_head.split(b"\r\n", 1)[0].split()
    if not sep or len(status_line) < 2 or status_line[1] != b"200":
        return None
    try:
        value = jsontext.loads(answer)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_recovery(data_dir: str) -> dict[str, Any] | None:
    """The last automatic database recovery (recovery.json), or None."""
    try:
        with open(os.path.join(data_dir, RECOVERY_FILENAME), "rb") as handle:
            value = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
