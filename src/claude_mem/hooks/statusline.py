"""`claude-mem statusline`: one short line for Claude Code's `statusLine` setting. Stdlib only.

Claude Code runs the command on every update (at most every 300 ms) with the session's JSON on
stdin (`cwd`, `workspace.current_dir`, …) and shows the first line of stdout. The line names what
the memory holds for this project, what waits in the queue, what failed, and the observer:

    memory: 128 notes · 3 queued · observer claude

With `CLAUDE_MEM=off` in the session's environment it says memory is off (and reads nothing);
`read` and `write` add `read-only` or `write-only` to the line.

It never fails and never waits: unreadable input means the current directory, a busy or missing
database means "memory: starting", and the exit code is always 0.

It runs as often as Claude Code redraws, and between two writes to the database every run would print
the same counts: so the counts are kept in `cache/statusline.json`, keyed by the session's directory
and by the identity, size and modification time of the database and its WAL (every write changes
one of them), and a run whose files have not changed since reads nothing else — it does not even
load `sqlite3`. The racy case (a write in the same clock tick as the counting, which could leave the
file's time unchanged; git's index has the same one) is never cached. Otherwise it loads only the
store's connection, project identity and worker discovery, reads through indexes only
(`store.status_line`), and imports the observer's naming (`recall.context`) and the settings only
when a running worker did not name its observer.
"""

from __future__ import annotations

import os
import sys
import time

from claude_mem import paths, settings
from claude_mem.fastpath import files, jsontext
from claude_mem.runtime import discovery, switch

BUSY_MS = 20
MAX_INPUT = 1_000_000
CACHE_FILENAME = "statusline.json"
CACHE_ENTRIES = 16  # directories remembered (sessions in several checkouts)
# A file whose modification time is this close to when its counts were read may be written again
# without its time changing (file times advance in clock ticks of a few ms): such counts are not kept.
RACY_NS = 50_000_000


def _cwd(raw: bytes) -> str:
    """The session's directory from Claude Code's JSON, else the process's own."""
    try:
        incoming = jsontext.loads(raw[:MAX_INPUT]) if raw.strip() else {}
    except ValueError:
        incoming = {}
    if isinstance(incoming, dict):
        workspace = incoming.get("workspace")
        for value in ((workspace or {}).get("current_dir") if isinstance(workspace, dict) else None, incoming.get("cwd")):
            if isinstance(value, str) and value.strip():
                return value
    return os.getcwd()


def _signature(data_dir: str) -> list[list[int] | None]:
    """(inode, size, modification time in ns) of the database and of its WAL (None: no such file)."""
    found: list[list[int] | None] = []
    for name in (paths.DB_FILENAME, paths.DB_FILENAME + "-wal"):
        try:
            info = os.stat(os.path.join(data_dir, name))
        except OSError:
            found.append(None)
            continue
        found.append([info.st_ino, info.st_size, info.st_mtime_ns])
    return found


def _cache_path(data_dir: str) -> str:
    return os.path.join(paths.cache_dir(data_dir), CACHE_FILENAME)


def _read_cache(data_dir: str) -> dict[str, object]:
    try:
        with open(_cache_path(data_dir), "rb") as handle:
            cache = jsontext.loads(handle.read(1_000_000))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def _keep(data_dir: str, cache: dict[str, object], where: str, signature: list[list[int] | None],
          counts: tuple[int, int, int]) -> None:
    """Remember `counts` for `where` under `signature`: best effort (a read-only data dir keeps nothing)."""
    cache.pop(where, None)
    cache[where] = {"signature": signature, "counts": list(counts)}
    kept = dict(list(cache.items())[-CACHE_ENTRIES:])
    files.replace_atomically(_cache_path(data_dir), jsontext.dumps(kept).encode())


def _counted(entry: object, signature: list[list[int] | None]) -> tuple[int, int, int] | None:
    """The counts of a cache entry made under `signature`, or None."""
    if not isinstance(entry, dict) or entry.get("signature") != signature:
        return None
    counts = entry.get("counts")
    if isinstance(counts, list) and len(counts) == 3 and all(type(n) is int and n >= 0 for n in counts):
        return counts[0], counts[1], counts[2]
    return None


def counts(raw: bytes, data_dir: str) -> tuple[int, int, int] | str:
    """(this project's notes, events queued, events failed), or the line to show instead."""
    where = _cwd(raw)
    key = where + "\0" + os.environ.get("CLAUDE_PROJECT_DIR", "")  # the project is found from both
    signature = _signature(data_dir)
    cache = _read_cache(data_dir) if signature[0] is not None else {}
    cached = _counted(cache.get(key), signature)
    if cached is not None:
        return cached
    checked = time.time_ns()
    from claude_mem import store
    from claude_mem.store import projects as store_projects
    from claude_mem.store import status_line

    try:
        conn = store.open(data_dir, readonly=True, busy_timeout_ms=BUSY_MS)
    except store.NoDatabase:
        return "memory: starting (nothing stored yet)"
    try:
        found = status_line.status_counts(conn, store_projects.project_here(conn, where))
    except store.DatabaseError:
        return "memory: busy"
    finally:
        conn.close()
    if signature[0] is not None and all(part is None or part[2] < checked - RACY_NS for part in signature):
        _keep(data_dir, cache, key, signature, found)
    return found


def line(raw: bytes, data_dir: str | None = None) -> str:
    """The status line for the session described by `raw` (Claude Code's statusLine JSON)."""
    chosen = switch.mode(os.environ)
    if chosen == switch.OFF:  # the session reads nothing: neither does its status line
        return f"memory: off for this session ({switch.label()})"
    data_dir = data_dir or settings.data_dir()
    found = counts(raw, data_dir)
    if isinstance(found, str):
        return found
    notes, queued, failed = found
    parts = [f"memory: {notes} note{'s' if notes != 1 else ''}"]
    if queued:
        parts.append(f"{queued} queued")
    if failed:
        parts.append(f"{failed} failed (claude-mem queue)")
    info = discovery.read_info(data_dir)
    running = info is not None and discovery.pid_alive(info.get("pid"))
    parts.append(f"observer {_observer(data_dir, info)}" if running and info is not None else "worker stopped")
    if chosen != switch.ON:
        parts.append(f"{'read-only' if chosen == switch.READ else 'write-only'} ({switch.label()})")
    return " · ".join(parts)


PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def _observer(data_dir: str, info: dict[str, object]) -> str:
    """The running worker's observer, as the session-start context names it (`observer_name`); a plain
    name the worker reported (`claude`, `openai`) is taken as it is, without loading recall."""
    reported = info.get("provider")
    name = reported.get("name") if isinstance(reported, dict) else reported
    if isinstance(name, str) and 0 < len(name) <= 40 and set(name) <= PLAIN:
        return name
    from claude_mem.recall.context import observer_name

    try:
        values = settings.load(data_dir)
    except settings.SettingsError:
        values = dict(settings.DEFAULTS)
    return observer_name(data_dir, values)


def run(argv: list[str]) -> int:
    """Entry for `claude-mem statusline`: print the line; exit 0 whatever happens."""
    if any(arg in ("-h", "--help") for arg in argv):
        sys.stdout.write(USAGE)
        return 0
    try:
        raw = sys.stdin.buffer.read(MAX_INPUT + 1) if sys.stdin is not None and not sys.stdin.isatty() else b""
        text = line(raw)
    except Exception as exc:  # noqa: BLE001 - a status line must never break Claude Code's screen
        text = f"memory: unavailable ({type(exc).__name__})"
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0


USAGE = """Usage: claude-mem statusline

  One short line for Claude Code's status bar: the notes stored for this project, what waits in
  the queue, failures, and the observer. Says when CLAUDE_MEM makes the session read-only,
  write-only or off. Reads Claude Code's statusLine JSON on stdin (optional).
  Add to ~/.claude/settings.json:

    "statusLine": {"type": "command", "command": "claude-mem statusline"}
"""
