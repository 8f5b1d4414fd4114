"""Failures and their fixes (issue 31), the worker's side: resolution links, deterministic and offline.

Every captured event is read once, in order, past a watermark (`store.failures`). A successful Bash call
resolves the earlier unresolved failures of its project with the same normalized command
(`capture.failure_signature.command_signature`) — and, when it runs its program as a whole (`pytest`,
`tsc --noEmit`: `broad`), every unresolved failure of that program; its fix is what happened in that project between the last
of those failures and the success — the files edited, the commands run — and the observations made from
those events (`observation_sources`, read when a note is written). Here the fix also gets a one-line
"cause → fix": the failure's error excerpt and what was done, from the events alone (no LLM).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from claude_mem.capture.failure_signature import command_signature, normalize_command
from claude_mem.recall.failure_notes import fixing
from claude_mem.recall.sanitize import clean
from claude_mem.store import Store
from claude_mem.store import failures as store

BATCH = 500  # events read per transaction
COMMAND_CHARS = 20_000  # of a command normalized (the signature reads far less)
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
ROUTINE = re.compile(
    r"^\s*(?:cd\s+\S+\s*&&\s*)?(?:ls|ll|pwd|cat|head|tail|less|wc|find|grep|rg|tree|which|echo|stat|file|du|df|"
    r"env|clear|git\s+(?:status|log|diff|show|branch|remote))\b")


def _payload(raw: str) -> dict[str, Any] | None:
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _command(payload: dict[str, Any]) -> str | None:
    given = payload.get("tool_input")
    command = given.get("command") if isinstance(given, dict) else None
    return command[:COMMAND_CHARS] if isinstance(command, str) and command.strip() else None


def _relative(path: str, cwd: object) -> str:
    if isinstance(cwd, str) and cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def describe(cause: str, between: list[tuple[int, str, str]]) -> str:
    """The one-line "cause → fix" from the error excerpt and the events between failure and success."""
    edited: list[str] = []
    ran: list[str] = []
    for _event_id, kind, raw in between:
        payload = _payload(raw)
        if payload is None or kind != "tool":
            continue
        name = payload.get("tool_name")
        given = payload.get("tool_input")
        if name in EDIT_TOOLS and isinstance(given, dict):
            path = given.get("file_path") or given.get("notebook_path")
            if isinstance(path, str) and path:
                edited.append(_relative(path, payload.get("cwd")))
        elif name == "Bash":
            command = _command(payload)
            if command and not ROUTINE.match(command):
                ran.append(" ".join(command.split())[:80])
    done = []
    if edited:
        files = list(dict.fromkeys(edited))
        done.append("edited " + ", ".join(files[:3]) + (f" (+{len(files) - 3} more)" if len(files) > 3 else ""))
    if ran:
        commands = list(dict.fromkeys(ran))
        done.append("ran " + "; ".join(f"`{command}`" for command in commands[-2:]))
    fix = "; ".join(done) if done else "passed on a later run with nothing changed in between"
    cause = clean(cause, 100)
    return clean(f"{cause} \u2192 {fix}" if cause else fix, 300)


def broad(program: str, normalized: str) -> bool:
    """Whether a normalized command runs its program as a whole: nothing after the program but flags
    (`pytest`, `pytest -x -q`, `tsc --noEmit`), no path, name or value that could narrow it. Its success
    resolves every failure of the program, whatever narrower form failed."""
    rest = normalized[len(program):].split() if normalized.startswith(program) else None
    return rest is not None and all(word.startswith("-") and "<" not in word for word in rest)


def resolve(conn: Store, limit: int = BATCH) -> int:
    """Read the next `limit` captured events and link each successful Bash call to the failures it resolves;
    how many events were read."""
    after = store.scanned(conn)
    successes, last = store.successes_after(conn, after, limit)
    if last == after:
        return 0
    links: list[tuple[list[int], int, str, int, str]] = []
    linked: set[int] = set()
    for event_id, project, raw, at in successes:
        payload = _payload(raw)
        if payload is None or payload.get("tool_name") != "Bash":
            continue
        command = _command(payload)
        if not command:
            continue
        program, normalized = normalize_command(command)
        signature = command_signature(command)
        if not signature:
            continue
        found = store.unresolved(conn, project, signature, event_id)
        if program and broad(program, normalized):  # `pytest` passing resolves `pytest tests/x.py` too
            found = sorted(set(found) | set(store.unresolved_program(conn, project, program, event_id)))
        open_rows = [row for row in found if row[0] not in linked]
        if not open_rows:
            continue
        fix_from, cause = open_rows[-1]
        fix = describe(cause, store.events_between(conn, project, fix_from, event_id))
        ids = [row[0] for row in open_rows]
        linked.update(ids)
        links.append((ids, event_id, at, fix_from, fix))
    store.resolve(conn, links, last)
    return last - after if last > after else 0


def listing(conn: Store, project: str | None, minimum: int = 2, limit: int = 100) -> list[dict[str, Any]]:
    """Recurring failures (seen at least `minimum` times), newest first, with the fix that resolved the
    latest of them (its observations `#id title`) or none: what `claude-mem failures` and `/api/failures` show."""
    rows = store.recurring(conn, project, minimum, limit)
    for row in rows:
        row["fix_observations"] = [{"id": obs_id, "type": kind, "title": title, "files_modified": files}
                                   for obs_id, kind, title, files in fixing(conn, row["project"], row, limit=3)]
        row["resolved"] = row["open"] == 0
        row["project_name"] = os.path.basename(str(row["project"]).rstrip("/")) or row["project"]
        kind, _, signature = str(row.pop("signature")).partition(":")
        row["signature"] = {"kind": "command" if kind == "c" else "error", "text": signature}
        for key in ("fix_from", "last_event"):
            row.pop(key)
    return rows
