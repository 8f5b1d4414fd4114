"""`claude-mem statusline`: one short line for Claude Code's `statusLine` setting. Stdlib only.

Claude Code runs the command on every update (at most every 300 ms) with the session's JSON on
stdin (`cwd`, `workspace.current_dir`, …) and shows the first line of stdout. The line names what
the memory holds for this project, what waits in the queue, what failed, and the observer:

    memory: 128 notes · 3 queued · observer claude

It never fails and never waits: unreadable input means the current directory, a busy or missing
database means "memory: starting", and the exit code is always 0.

It runs as often as Claude Code redraws, so it loads only the store's connection, project identity
and worker discovery, reads through indexes only (`store.status_line`), and imports the observer's
naming (`recall.context`) and the settings only when a running worker did not name its observer.
"""

from __future__ import annotations

import os
import sys

from claude_mem import settings, store
from claude_mem.fastpath import jsontext
from claude_mem.runtime import discovery
from claude_mem.store import projects as store_projects
from claude_mem.store import status_line

BUSY_MS = 20
MAX_INPUT = 1_000_000


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


def line(raw: bytes, data_dir: str | None = None) -> str:
    """The status line for the session described by `raw` (Claude Code's statusLine JSON)."""
    data_dir = data_dir or settings.data_dir()
    try:
        conn = store.open(data_dir, readonly=True, busy_timeout_ms=BUSY_MS)
    except store.NoDatabase:
        return "memory: starting (nothing stored yet)"
    try:
        key = store_projects.project_here(conn, _cwd(raw))
        notes, queued, failed = status_line.status_counts(conn, key)
    except store.DatabaseError:
        return "memory: busy"
    finally:
        conn.close()
    parts = [f"memory: {notes} note{'s' if notes != 1 else ''}"]
    if queued:
        parts.append(f"{queued} queued")
    if failed:
        parts.append(f"{failed} failed (claude-mem queue)")
    info = discovery.read_info(data_dir)
    running = info is not None and discovery.pid_alive(info.get("pid"))
    parts.append(f"observer {_observer(data_dir, info)}" if running and info is not None else "worker stopped")
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
  the queue, failures, and the observer. Reads Claude Code's statusLine JSON on stdin (optional).
  Add to ~/.claude/settings.json:

    "statusLine": {"type": "command", "command": "claude-mem statusline"}
"""
