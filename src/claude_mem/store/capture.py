"""The capture repository: write one capture record (session, prompt and event rows), ingest the spool.

`apply_record` is used by the hook (inside its one `BEGIN IMMEDIATE`) and by the worker when it
ingests the spool, so a spooled record lands exactly as it would have. Stdlib only: the hooks
import it.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # `sqlite3`'s own driver, without the `datetime` its wrapper imports (db.py)
import os

from claude_mem.capture import diagnostics
from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

    Record = dict[str, Any]

from claude_mem.store import db, projects

TEXT_CHARS = 1_000  # of a failure's command and error excerpts kept in `failures`

_UPSERT_SESSION = """
INSERT INTO sessions (content_session_id, project, cwd, started_at, last_activity_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (content_session_id) DO UPDATE SET
    last_activity_at = MAX(sessions.last_activity_at, excluded.last_activity_at),
    status = CASE WHEN sessions.status = 'completed' THEN 'active' ELSE sessions.status END,
    ended_at = CASE WHEN sessions.status = 'completed' THEN NULL ELSE sessions.ended_at END
"""


def _session_id(conn: sqlite3.Connection, record: Record, known: int | None) -> int:
    """Create or touch the session (`known`: its id when it exists); its project is fixed by the first
    event that creates it."""
    at = record["captured_at"]
    conn.execute(_UPSERT_SESSION, (record["content_session_id"], record["project"], record["cwd"] or None, at, at))
    if known is not None:
        return known
    row = conn.execute(
        "SELECT id FROM sessions WHERE content_session_id = ?", (record["content_session_id"],)
    ).fetchone()
    return int(row[0])


def _current_prompt(conn: sqlite3.Connection, session_id: int) -> tuple[int, bool]:
    """(number, private) of the session's latest prompt; (0, False) before the first one."""
    row = conn.execute(
        "SELECT prompt_number, private FROM prompts WHERE session_id = ? ORDER BY prompt_number DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return (int(row[0]), bool(row[1])) if row else (0, False)


def _insert_event(conn: sqlite3.Connection, record: Record, session_id: int, number: int | None, payload: Record) -> bool:
    cursor = conn.execute(
        "INSERT INTO pending_events (event_key, session_id, kind, prompt_number, payload, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (event_key) DO NOTHING",
        (record["event_key"], session_id, record["kind"], number,
         jsontext.dumps(payload, ensure_ascii=False), record["captured_at"]),
    )
    if cursor.rowcount != 1:
        return False
    if record["kind"] in ("tool", "tool_failure") and cursor.lastrowid is not None:
        _record_failure(conn, record, session_id, cursor.lastrowid, payload)
    return True


# Where a tool's response reports its exit code, when it does (Claude Code's Bash reports a failed command
# as PostToolUseFailure; other shells and versions answer PostToolUse with the code).
EXIT_KEYS = ("exitCode", "exit_code", "returnCode", "returncode")


def failure_of(kind: str, payload: Record) -> tuple[str, object, str] | None:
    """(tool name, tool input, error text) when the event is a failure: a `tool_failure` (not an interrupt by
    the user), or a Bash call whose response reports a non-zero exit code; else None."""
    name = payload.get("tool_name")
    if not isinstance(name, str) or payload.get("is_interrupt") is True:
        return None
    if kind == "tool_failure":
        error = payload.get("error")
        return name, payload.get("tool_input"), error if isinstance(error, str) else ""
    response = payload.get("tool_response")
    if kind != "tool" or name != "Bash" or not isinstance(response, dict):
        return None
    for key in EXIT_KEYS:
        code = response.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            parts = [response.get("stderr"), response.get("stdout")]
            return name, payload.get("tool_input"), "\n".join(part for part in parts if isinstance(part, str))
    return None


def _record_failure(conn: sqlite3.Connection, record: Record, session_id: int, event_id: int, payload: Record) -> None:
    """A failure's row in `failures` (m020), with its signatures, in the capture's transaction; the record
    keeps {event_id, command, error} under `failure` for the hook's note (`recall.failure_notes`)."""
    found = failure_of(record["kind"], payload)
    if found is None:
        return
    from claude_mem.capture.failure_signature import signature

    try:
        sig = signature(*found)
    except Exception:  # noqa: BLE001 - the event is stored with or without its signature
        return
    if not sig:
        return
    command_sig = sig.get("command") or None
    error_sig = sig.get("error") if str(sig.get("error_text") or "").strip() else None  # no error lines: no key
    if not (command_sig or error_sig):
        return
    conn.execute(
        "INSERT INTO failures (event_id, session_id, project, tool_name, command_sig, error_sig, program,"
        " command_text, error_text, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (event_id, session_id, record["project"], found[0], command_sig, error_sig,
         sig.get("program") or None, str(sig.get("command_text") or "")[:TEXT_CHARS],
         str(sig.get("error_text") or "")[:TEXT_CHARS], record["captured_at"]))
    record["failure"] = {"event_id": event_id, "session_id": session_id, "command": command_sig, "error": error_sig}


def is_duplicate(conn: sqlite3.Connection, record: Record) -> bool:
    key = record.get("event_key")
    return bool(key) and conn.execute("SELECT 1 FROM pending_events WHERE event_key = ?", (key,)).fetchone() is not None


def _settle_project(conn: sqlite3.Connection, record: Record) -> int | None:
    """Set the record's project to its session's: the stored one, or for a new session the key its
    checkout resolves to (`store.projects`: a moved or re-cloned checkout keeps its first-known key).
    Returns the session's id when it exists."""
    row = conn.execute(
        "SELECT id, project FROM sessions WHERE content_session_id = ?", (record["content_session_id"],)
    ).fetchone()
    if row is not None:
        record["project"] = row[1]
        return int(row[0])
    record["project"] = projects.register(conn, record["project"], record.get("remote"), record["captured_at"])
    return None


def apply_record(conn: sqlite3.Connection, record: Record) -> bool:
    """Write the rows of one capture record; False when it added nothing (a duplicate, a private turn).

    The record's `project` becomes the session's project key (what the session-start context shows)."""
    known = _settle_project(conn, record)
    if is_duplicate(conn, record):
        return False
    kind = record["kind"]
    session_id = _session_id(conn, record, known)
    if kind == "session_start":
        return True
    payload = dict(record["payload"])
    if kind == "prompt":
        number = _current_prompt(conn, session_id)[0] + 1
        private = bool(record.get("private"))
        conn.execute(
            "INSERT INTO prompts (session_id, prompt_number, text, private, created_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, number, "" if private else payload["prompt"], int(private), record["captured_at"]),
        )
        if private:
            return True
        payload["prompt_number"] = number
        return _insert_event(conn, record, session_id, number, payload)
    number, private_turn = _current_prompt(conn, session_id)
    if kind in ("tool", "tool_failure", "summarize") and private_turn:
        return False
    if kind == "summarize":
        payload["prompt_number"] = number
    if kind == "session_end":
        conn.execute(
            "UPDATE sessions SET ended_at = ?, status = CASE WHEN status IN ('active', 'interrupted')"
            " THEN 'completed' ELSE status END WHERE id = ?", (record["captured_at"], session_id)
        )
    return _insert_event(conn, record, session_id, number or None, payload)


# A record that fails with one of these is bad (it would fail every time): quarantined, not retried.
# Anything else (a busy or damaged database) leaves the file for the next ingest.
_BAD_RECORD = (sqlite3.IntegrityError, sqlite3.InterfaceError, KeyError, TypeError, ValueError, AttributeError)


def ingest_spool(conn: sqlite3.Connection, data_dir: str) -> int:
    """Move every spooled record into the database; returns how many added rows (duplicates excluded).

    Each file commits in one transaction, each record in a savepoint of it: a record that cannot
    be stored is left out, its file kept in `quarantine/` with a log line, and the rest go in.
    """
    from claude_mem.capture import spool, trouble  # the worker's job: the hooks that import this module never ingest

    drained = trouble.drain(data_dir, spool.spool_dir(data_dir))  # events kept outside a full or read-only data dir
    added = 0
    for path in spool.pending_files(data_dir):
        claimed = spool.claim(path)
        if claimed is None:
            continue  # another ingest took it
        records, damaged = spool.read_records(claimed)
        rejected: list[str] = []
        with db.transaction(conn):
            for record in records:
                try:
                    with db.transaction(conn):
                        added += bool(apply_record(conn, record))
                except _BAD_RECORD as exc:
                    rejected.append(f"{record.get('kind')} record: {type(exc).__name__}: {exc}")
        name = os.path.basename(path)
        if damaged:
            diagnostics.log(data_dir, "spool", f"{damaged} damaged line(s) in {name}")
        for problem in rejected:
            diagnostics.log(data_dir, "spool", f"cannot store a {problem} (in {name})")
        if damaged or rejected:
            diagnostics.quarantine_file(data_dir, "spool", claimed)
        else:
            os.unlink(claimed)
    if added or drained:
        trouble.clear(data_dir)  # the database took writes again (clears only once the overflow is empty)
    return added
