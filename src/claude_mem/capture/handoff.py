"""A post-tool hook hands its payload to the running worker over a local socket (issue 27).

Redacting a 100 KB tool output costs a fresh hook process ~15 ms of CPU on top of ~9 ms of
imports; a running worker has everything imported and compiled. So the hook first offers the raw
payload, with the environment the capture depends on, to the worker's capture socket
(`worker/capture_socket.py`, at `socket_path`: in a directory of its user's alone). The worker
redacts and commits (or spools) it exactly as the hook would (`store.intake.take`) and answers
`ok` only once the capture is durable. Anything else — no socket, a socket left by a dead worker,
no answer within ANSWER_TIMEOUT_S, a refusal, a half answer — and the hook captures the event in
its own process, as without a worker: nothing is lost either way.

Stdlib only and light: `_socket` (the C module behind `socket`, which would import `enum` and
`selectors`) and `fastpath.jsontext`.
"""

import os
import stat

from claude_mem.fastpath import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAGIC = b"claude-mem-capture/2"  # /2: the answer carries the hook's output JSON (a failure's note)
MAGICS = (b"claude-mem-capture/1", MAGIC)
# Hooks the worker takes: post-tool only (session-start and user-prompt print what the hook itself
# computes; stop and session-end are small).
HOOKS = ("post-tool",)
CONNECT_TIMEOUT_S = 0.005  # a live worker's socket accepts at once
ANSWER_TIMEOUT_S = 2.0  # redaction and the commit in the worker; then the hook does it itself
MAX_REPLY_BYTES = 65_536
# What the capture reads from the environment: the session's start directory and every setting.
ENV_PREFIX = "CLAUDE_MEM_"
ENV_NAMES = ("CLAUDE_PROJECT_DIR",)


def socket_path(data_dir: str) -> str | None:
    """`$TMPDIR/claude-mem-<uid>/<digest of the data dir>.sock` (None without user ids): outside the data
    dir, whose every file is data, and short (a socket's path has room for ~100 bytes)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None
    from claude_mem.capture.digest import sha256_hex

    digest = sha256_hex(os.path.abspath(data_dir).encode("utf-8", "surrogateescape"))[:24]
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"claude-mem-{getuid()}", f"{digest}.sock")


def private_dir(path: str) -> bool:
    """Is the directory of `path` this user's alone (a directory, not a link, owned by them, mode 0700)?
    Anyone who could put a socket there would be handed the hooks' payloads before redaction."""
    try:
        found = os.lstat(os.path.dirname(path))
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o077


def captured_env(env: "dict[str, Any]") -> "dict[str, str]":
    """The part of a hook's environment its capture depends on."""
    return {name: str(value) for name, value in env.items() if name in ENV_NAMES or name.startswith(ENV_PREFIX)}


def settings_env(env: "Mapping[str, Any]") -> "dict[str, str]":
    """The settings an environment gives (`CLAUDE_MEM_…`), but the data dir: the worker takes an event
    only when the hook's are its own."""
    return {name: str(value) for name, value in env.items()
            if name.startswith(ENV_PREFIX) and name != ENV_PREFIX + "DATA_DIR"}


def request(hook: str, raw: bytes, env: "dict[str, Any]", shows: bool = True) -> bytes:
    """`MAGIC <header bytes> <payload bytes>\\n`, the JSON header (hook, environment, whether the session
    shows memory), the raw payload."""
    header = jsontext.dumps({"hook": hook, "env": captured_env(env), "shows": shows}).encode("utf-8", "surrogatepass")
    return b"%s %d %d\n%s%s" % (MAGIC, len(header), len(raw), header, raw)


def send(data_dir: str, hook: str, raw: bytes, env: "dict[str, Any]",
         shows: bool = True) -> "tuple[list[str], dict[str, Any] | None] | None":
    """Offer one hook call to the worker: its stderr messages and stdout JSON (None: nothing to print) once
    the worker made the capture durable, None when the hook must capture the event itself."""
    path = socket_path(data_dir)
    if hook not in HOOKS or path is None or not os.path.exists(path) or not private_dir(path):
        return None
    try:
        import _socket
    except ImportError:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(path)
        sock.settimeout(ANSWER_TIMEOUT_S)
        sock.sendall(request(hook, raw, env, shows))
        sock.shutdown(_socket.SHUT_WR)
        reply = b""
        while len(reply) <= MAX_REPLY_BYTES:
            chunk = sock.recv(MAX_REPLY_BYTES)
            if not chunk:
                break
            reply += chunk
    except OSError:  # refused, gone, timed out: capture in process
        return None
    finally:
        sock.close()
    return parse_reply(reply)


def parse_reply(reply: bytes) -> "tuple[list[str], dict[str, Any] | None] | None":
    """`ok <output bytes>\\n<output JSON><messages>` (or `ok\\n<messages>`) -> (messages, output); None for
    anything else."""
    status, newline, text = reply.partition(b"\n")
    word, _, size = status.partition(b" ")
    if word != b"ok" or not newline or (size and not size.isdigit()):
        return None
    output = None
    if size:
        length = int(size)
        if length > len(text):
            return None
        try:
            output = jsontext.loads(text[:length].decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        if not isinstance(output, dict):
            return None
        text = text[length:]
    return [line for line in text.decode("utf-8", "replace").splitlines() if line], output
