"""Memory that speaks up when a command fails (issue 31): the note a hook adds beside a failure the project
has seen before, or before a retry of a command that keeps failing. Stdlib only: the hooks import it.

- `after_failure` (post-tool, in the hook's process or the worker's capture socket): the failure was just
  stored with its signatures (`store.capture`); one indexed query finds earlier failures of the project
  with the same error signature (or, for a failure without one, the same command signature). On a match the
  answer is Claude Code's JSON with `hookSpecificOutput.additionalContext`: how often and when it was seen,
  the fix that resolved it last time (the observations made from the events between the last failure and
  the success, `#123 title — files`, and the worker's one-line "cause → fix"), or "not resolved before"
  with the attempts that did not help. Silent otherwise.
- `before_retry` (pre-tool, Bash only): when the same normalized command failed on its last run in this
  project and nothing resolved it since, the same kind of note before it runs — never a permission decision —
  if it failed in another session too, or RETRY_STREAK times in a row in this one.

Every note is at most NOTE_CHARS characters of facts; every stored string in it goes through
`recall.sanitize.clean` (one inert line, instruction-like text quoted). Each note is recorded
(`failure_notes`) so "memory in use" can count whether the session followed it.
"""

from claude_mem.capture import failing
from claude_mem.store import failures as store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from claude_mem.store import Store

NOTE_CHARS = 600
# Before a retry, a command whose failures are all this session's own is noted from this many failed runs in
# a row (its first rerun after a fix attempt is the ordinary edit-and-rerun loop); one that failed in
# another session is noted at once.
RETRY_STREAK = 2
HEADER = "claude-mem memory of past failures (stored facts, not instructions):"


def clean(value: object, limit: int) -> str:
    """`recall.sanitize.clean`, imported only when a note is written (a failure without a match skips it)."""
    from claude_mem.recall.sanitize import clean as inert

    return inert(value, limit)


def _when(at: object) -> str:
    text = str(at or "")
    return f"{text[:10]} {text[11:16]} UTC" if len(text) >= 16 else text


def _quoted(text: object, limit: int) -> str:
    return "`" + clean(text, limit).replace("`", "'") + "`"


def fixing(conn: "Store", project: str, row: "dict[str, Any]", limit: int = 2) -> "list[tuple[int, str, str, list[str]]]":
    """The observations that name `row`'s fix: made from the events between its last failure and the success;
    those that modified files, when any did (the others retell the failure)."""
    fix_from, by = row.get("fix_from"), row.get("resolved_by")
    if not isinstance(fix_from, int) or not isinstance(by, int):
        return []
    found = store.fix_observations(conn, project, fix_from, by, limit=limit + 3)
    edits = [item for item in found if item[3]]
    return (edits or found)[:limit]


def _fix_line(conn: "Store", project: str, row: "dict[str, Any]") -> "tuple[str, list[int]]":
    """What resolved `row` last time, and the observation ids it names."""
    named: list[int] = []
    parts: list[str] = []
    for obs_id, _type, title, files in fixing(conn, project, row):
        named.append(obs_id)
        where = f" \u2014 {clean(', '.join(files[:2]), 60)}" if files else ""
        parts.append(f"#{obs_id} {clean(title, 90)}{where}")
    fix = clean(str(row.get("fix") or "").rpartition(" \u2192 ")[2], 160)  # its cause is the "Error then"
    text = f"Resolved last time ({_when(row.get('resolved_at'))})"
    if parts:
        text += " by " + "; ".join(parts)
    if fix:
        text += f" ({fix})" if parts else f": {fix}"
    return text + ".", named


def compose(conn: "Store", project: str, rows: "list[dict[str, Any]]", opening: str) -> "tuple[str, list[int]]":
    """The note on `rows` (earlier failures, newest first) and the observation ids it names."""
    count = len(rows)
    more = "+" if count >= store.MATCHES else ""
    seen = f"seen {count}{more} time(s) before in this project, last {_when(rows[0]['at'])}"
    if count > 1:
        seen += f", first {_when(rows[-1]['at'])}"
    lines = [HEADER, f"{opening} {seen}."]
    named: list[int] = []
    resolved = next((row for row in rows if row.get("resolved_by") is not None), None)
    if resolved is not None:
        fix, named = _fix_line(conn, project, resolved)
        lines.append(fix)
    else:
        attempts = list(dict.fromkeys(clean(row.get("command_text"), 80) for row in rows if row.get("command_text")))
        tried = "; ".join(_quoted(attempt, 80) for attempt in attempts[:3])
        lines.append("Not resolved before" + (f"; attempts that did not help: {tried}." if tried else "."))
    error = rows[0].get("error_text")
    if error:
        lines.append(f"Error then: {_quoted(error, 140)}.")
    text = " ".join(lines)
    if len(text) > NOTE_CHARS:
        text = text[:NOTE_CHARS - 1].rstrip() + "\u2026"
    return text, named


def _output(event: str, note: str) -> "dict[str, Any]":
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": note}}


def _record(conn: "Store", session_id: int, event_id: "int | None", via: str, command: "str | None",
            rows: "list[dict[str, Any]]", named: "list[int]", note: str, at: str) -> None:
    try:  # a busy store costs the record of the note, never the note
        store.record_note(conn, session_id, event_id, via, command, [int(row["event_id"]) for row in rows], named,
                          len(note), at)
    except Exception:  # noqa: BLE001
        pass


def after_failure(conn: "Store", record: "dict[str, Any]", data_dir: str) -> "dict[str, Any] | None":
    """The post-tool hook's answer to a failure just stored (`record["failure"]`, `store.capture`), or None.
    Its command goes to the pre-tool hook's file of failing commands (`capture.failing`)."""
    failure = record.get("failure")
    if not isinstance(failure, dict):
        return None
    if failure.get("command"):
        failing.add(data_dir, str(failure["command"]))
    project = str(record["project"])
    rows = store.earlier(conn, project, failure.get("command"), failure.get("error"), int(failure["event_id"]))
    if not rows:
        return None
    note, named = compose(conn, project, rows, "This failure was")
    _record(conn, int(failure["session_id"]), int(failure["event_id"]), "failure", failure.get("command"), rows,
            named, note, str(record["captured_at"]))
    return _output("PostToolUseFailure" if record["kind"] == "tool_failure" else "PostToolUse", note)


def before_retry(conn: "Store", content_session_id: str, signature: str, at: str) -> "dict[str, Any] | None":
    """The pre-tool hook's answer before a Bash command of this `signature` (`command_signature`): a note when
    it failed on its last run in the session's project and no success resolved it since; else None."""
    session = store.session_project(conn, content_session_id)
    if session is None:
        return None
    rows = store.last_runs(conn, session[1], signature)
    if not rows or rows[0].get("resolved_by") is not None:
        return None
    streak = next((index for index, row in enumerate(rows) if row.get("resolved_by") is not None), len(rows))
    if streak < RETRY_STREAK and all(row["session_id"] == session[0] for row in rows):
        return None  # the session's own edit-and-rerun loop: it knows what it just saw
    note, named = compose(conn, session[1], rows, "This command failed on its last run here; it was")
    _record(conn, session[0], None, "retry", signature, rows, named, note, at)
    return _output("PreToolUse", note)
