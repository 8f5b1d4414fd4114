"""The worker's capture socket: post-tool hooks hand their payload over (`capture/handoff.py`).

A Unix socket at `handoff.socket_path(data dir)`, 0600 in a 0700 directory of the worker's user
(none is opened when that directory is anyone else's). Each connection carries one
request; the event is captured by `store.intake.take`, the very code the hook runs in its own
process, in a worker thread, and the answer `ok` (plus the hook's stderr messages) is written only
after the capture is committed or spooled. Anything the worker cannot take exactly as the hook
would gets `no`, and the hook captures the event itself: another hook than post-tool, settings in
the hook's environment that differ from the worker's, a payload without a working directory (the
hook's own would be needed), input that is not a JSON object (the hook reports and quarantines
it), a malformed or half-sent request.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from claude_mem.capture import diagnostics, handoff
from claude_mem.fastpath import jsontext
from claude_mem.recall import failure_notes
from claude_mem.store import Store, intake
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

READ_TIMEOUT_S = 5.0  # a client that stops sending is dropped (it captures in process after its own timeout)
MAX_HEADER_BYTES = 65_536
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024
NO = b"no\n"


def answer(data_dir: str, header: bytes, raw: bytes, magic: bytes = handoff.MAGIC) -> bytes:
    """Capture one handed-over hook call; `ok` and its messages once durable, else `no`. To a `/2` request the
    answer is `ok <n>` and the hook's output JSON (n bytes) before the messages: the note beside a failure
    the project has seen before (`recall.failure_notes`), which the hook prints."""
    meta = jsontext.loads(header)
    hook, env = meta.get("hook"), meta.get("env")
    if hook not in handoff.HOOKS or not isinstance(env, dict):
        return NO
    if handoff.settings_env(env) != handoff.settings_env(os.environ):
        return NO  # the hook's settings differ from the worker's: only the hook reads them right
    try:
        incoming = jsontext.loads(raw)
    except (ValueError, RecursionError):
        return NO
    if not isinstance(incoming, dict) or not (env.get("CLAUDE_PROJECT_DIR") or incoming.get("cwd")):
        return NO
    taken = intake.take(hook, raw, env, data_dir)
    output = None
    try:
        if magic != handoff.MAGICS[0] and meta.get("shows", True) is not False and taken.outcome == "stored" \
                and taken.conn is not None and taken.record is not None and "failure" in taken.record \
                and taken.config.get("failure_notes", True):
            output = _failure_note(data_dir, taken.conn, taken.record)
    finally:
        if taken.conn is not None:
            taken.conn.close()
    if taken.notice:  # the data dir takes no write (`capture.trouble`): the user hears it once per session
        output = {**(output or {}), "systemMessage": taken.notice}
    messages = "\n".join(taken.messages).encode("utf-8", "replace")
    if magic == handoff.MAGICS[0]:
        return b"ok\n" + messages
    body = jsontext.dumps(output, ensure_ascii=True).encode("ascii") if output else b""
    return b"ok %d\n" % len(body) + body + messages if body else b"ok\n" + messages


def _failure_note(data_dir: str, conn: Store, record: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return failure_notes.after_failure(conn, record, data_dir)
    except Exception as exc:  # the event is stored; only the note is lost (as in the hook's own process)
        diagnostics.log(data_dir, "post-tool", f"failure note skipped: {type(exc).__name__}: {exc}")
        return None


class CaptureSocket:
    """The worker service that listens on the capture socket."""

    name = "capture socket"

    def __init__(self) -> None:
        self._server: asyncio.AbstractServer | None = None
        self._path: str | None = None
        self._data_dir = ""

    async def start(self, ctx: WorkerContext) -> None:
        await self.listen(ctx.data_dir)

    async def listen(self, data_dir: str) -> None:
        self._data_dir, path = data_dir, handoff.socket_path(data_dir)
        if path is None:
            return
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if not handoff.private_dir(path):
            log.warning("capture socket: %s is not this user's alone; hooks capture in their own process",
                        os.path.dirname(path))
            return
        try:  # one worker per data dir (worker.lock): a socket file here is a dead worker's
            os.unlink(path)
        except FileNotFoundError:
            pass
        self._server = await asyncio.start_unix_server(self._serve, path=path, limit=MAX_HEADER_BYTES + 1024)
        os.chmod(path, 0o600)
        self._path = path

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        if self._path is not None:
            try:
                os.unlink(self._path)
            except FileNotFoundError:
                pass
            self._path = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reply = NO
        try:
            line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT_S)
            magic, header_bytes, payload_bytes = line.split()
            header_size, payload_size = int(header_bytes), int(payload_bytes)
            if magic in handoff.MAGICS and 0 < header_size <= MAX_HEADER_BYTES and 0 <= payload_size <= MAX_PAYLOAD_BYTES:
                header = await asyncio.wait_for(reader.readexactly(header_size), READ_TIMEOUT_S)
                raw = await asyncio.wait_for(reader.readexactly(payload_size), READ_TIMEOUT_S)
                reply = await asyncio.to_thread(answer, self._data_dir, header, raw, magic)
        except (asyncio.IncompleteReadError, TimeoutError, ValueError, OSError):
            pass  # a half-sent or malformed request: `no`, and the hook captures it itself
        except Exception:
            log.exception("capture socket: a handed-over hook call failed; the hook captures it itself")
        try:
            writer.write(reply)
            await writer.drain()
            writer.close()
        except OSError:
            pass
