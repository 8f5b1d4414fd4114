"""Failures and their fixes (issue 31, m020): the queries behind the hooks' notes, the worker's resolution
links and the `failures` listings. Stdlib only: the post-tool and pre-tool hooks import it.

The hook writes a failure's row in its capture transaction (`store.capture`); the worker reads the captured
events past a watermark (`counters.failure_scanned_event`) and links each successful Bash call to the earlier
unresolved failures of the same command signature in its project (`recall.failures`). A note's lookup is one
indexed query (`earlier`), and one more for the fixing observations only when a match was resolved.
"""

from __future__ import annotations

import _sqlite3 as sqlite3

from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

WATERMARK = "failure_scanned_event"
MATCHES = 20  # earlier failures a note reads at most
_COLUMNS = ("event_id", "session_id", "at", "command_sig", "error_sig", "program", "command_text", "error_text",
            "resolved_by", "resolved_at", "fix_from", "fix")
_SELECT = "SELECT " + ", ".join(_COLUMNS) + " FROM failures"


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    return [dict(zip(_COLUMNS, row)) for row in cursor]


def earlier(conn: sqlite3.Connection, project: str, command_sig: str | None, error_sig: str | None,
            before: int, limit: int = MATCHES) -> list[dict[str, Any]]:
    """The newest earlier failures (event id below `before`) of `project` that are the same failure, newest
    first: the same error signature; for a failure without one, the same command signature (one command
    failing with different errors is different failures). One query on one index."""
    if error_sig:
        return _rows(conn.execute(f"{_SELECT} WHERE project = ? AND error_sig = ? AND event_id < ?"
                                  " ORDER BY event_id DESC LIMIT ?", (project, error_sig, before, limit)))
    if command_sig:
        return _rows(conn.execute(f"{_SELECT} WHERE project = ? AND command_sig = ? AND event_id < ?"
                                  " ORDER BY event_id DESC LIMIT ?", (project, command_sig, before, limit)))
    return []


def session_project(conn: sqlite3.Connection, content_session_id: str) -> tuple[int, str] | None:
    """(id, project) of a Claude Code session, if stored."""
    row = conn.execute("SELECT id, project FROM sessions WHERE content_session_id = ?",
                       (content_session_id,)).fetchone()
    return (int(row[0]), str(row[1])) if row else None


def last_runs(conn: sqlite3.Connection, project: str, command_sig: str, limit: int = MATCHES) -> list[dict[str, Any]]:
    """The newest failures of one command signature in `project`, newest first (the pre-tool hook's query)."""
    return _rows(conn.execute(f"{_SELECT} WHERE project = ? AND command_sig = ? ORDER BY event_id DESC LIMIT ?",
                              (project, command_sig, limit)))


def fix_observations(conn: sqlite3.Connection, project: str, after: int, before: int,
                     limit: int = 3) -> list[tuple[int, str, str, list[str]]]:
    """(id, type, title, files modified) of the observations made from the events of `project` between the
    last failure (`after`) and the success that resolved it (`before`): bugfixes and edits first."""
    found = []
    for row in conn.execute(
            "SELECT DISTINCT o.id, o.type, o.title, o.files_modified FROM observation_sources src"
            " JOIN observations o ON o.id = src.observation_id"
            " WHERE src.event_id > ? AND src.event_id < ? AND o.project = ?"
            " ORDER BY o.type = 'bugfix' DESC, o.files_modified != '[]' DESC, o.id DESC LIMIT ?",
            (after, before, project, limit)):
        try:
            files = jsontext.loads(row[3])
        except ValueError:
            files = []
        found.append((int(row[0]), str(row[1]), str(row[2]),
                      [str(name) for name in files] if isinstance(files, list) else []))
    return found


def record_note(conn: sqlite3.Connection, session_id: int, event_id: int | None, via: str, command_sig: str | None,
                failures: list[int], observations: list[int], chars: int, at: str) -> None:
    """Keep one note a hook added (m020 `failure_notes`)."""
    conn.execute(
        "INSERT INTO failure_notes (session_id, event_id, via, command_sig, failures, observations, chars, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, event_id, via, command_sig, jsontext.dumps(failures), jsontext.dumps(observations), chars, at))


# The worker's side: resolution links.

def scanned(conn: sqlite3.Connection) -> int:
    """The id of the last captured event the resolution has read (0: none yet)."""
    row = conn.execute("SELECT value FROM counters WHERE name = ?", (WATERMARK,)).fetchone()
    return int(row[0]) if row else 0


def waiting(conn: sqlite3.Connection) -> int:
    """Captured events the resolution has not read yet."""
    return int(conn.execute("SELECT COUNT(*) FROM pending_events WHERE id > ?", (scanned(conn),)).fetchone()[0])


def successes_after(conn: sqlite3.Connection, after: int, limit: int) -> tuple[list[tuple[int, str, str, str]], int]:
    """(event id, project, payload JSON, captured at) of the successful tool calls among the next `limit`
    captured events after `after`, and the id of the last event read (`after` when none)."""
    rows = conn.execute(
        "SELECT e.id, e.kind, s.project, e.payload, e.created_at,"
        " EXISTS (SELECT 1 FROM failures f WHERE f.event_id = e.id)"
        " FROM pending_events e JOIN sessions s ON s.id = e.session_id WHERE e.id > ? ORDER BY e.id LIMIT ?",
        (after, limit)).fetchall()
    last = int(rows[-1][0]) if rows else after
    return [(int(row[0]), str(row[2]), str(row[3]), str(row[4])) for row in rows
            if row[1] == "tool" and not row[5]], last


def unresolved(conn: sqlite3.Connection, project: str, command_sig: str, before: int) -> list[tuple[int, str]]:
    """(event id, error excerpt) of the failures of one command signature in `project` before `before` not yet
    resolved, oldest first."""
    return [(int(row[0]), str(row[1])) for row in conn.execute(
        "SELECT event_id, error_text FROM failures WHERE project = ? AND command_sig = ? AND event_id < ? AND resolved_by IS NULL"
        " ORDER BY event_id", (project, command_sig, before))]


def unresolved_program(conn: sqlite3.Connection, project: str, program: str, before: int) -> list[tuple[int, str]]:
    """(event id, error excerpt) of the Bash failures of one program in `project` before `before` not yet
    resolved, oldest first (what a broad success of that program, `pytest` or `tsc --noEmit`, resolves)."""
    return [(int(row[0]), str(row[1])) for row in conn.execute(
        "SELECT event_id, error_text FROM failures WHERE project = ? AND tool_name = 'Bash' AND program = ?"
        " AND event_id < ? AND resolved_by IS NULL ORDER BY event_id", (project, program, before))]


def events_between(conn: sqlite3.Connection, project: str, after: int, before: int,
                   limit: int = 200) -> list[tuple[int, str, str]]:
    """(id, kind, payload JSON) of the tool events of `project` strictly between two event ids, the newest
    `limit` of them in order: what was done between a failure and the success that resolved it."""
    rows = conn.execute(
        "SELECT e.id, e.kind, e.payload FROM pending_events e JOIN sessions s ON s.id = e.session_id"
        " WHERE e.id > ? AND e.id < ? AND s.project = ? AND e.kind IN ('tool', 'tool_failure')"
        " ORDER BY e.id DESC LIMIT ?", (after, before, project, limit)).fetchall()
    return [(int(row[0]), str(row[1]), str(row[2])) for row in reversed(rows)]


def resolve(conn: sqlite3.Connection, links: list[tuple[list[int], int, str, int, str]], scanned_to: int) -> None:
    """Mark failures resolved — each link (failure event ids, resolving event id, at, fix from, fix text) —
    and move the watermark to `scanned_to`, in one transaction."""
    from claude_mem.store.transaction import transaction

    with transaction(conn):
        for failures, by, at, fix_from, fix in links:
            conn.executemany(
                "UPDATE failures SET resolved_by = ?, resolved_at = ?, fix_from = ?, fix = ?"
                " WHERE event_id = ? AND resolved_by IS NULL", [(by, at, fix_from, fix, event) for event in failures])
        conn.execute("INSERT INTO counters (name, value) VALUES (?, ?)"
                     " ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)", (WATERMARK, scanned_to))


def open_commands(conn: sqlite3.Connection) -> list[str]:
    """The command signatures of the failures not resolved yet (the pre-tool hook's pre-filter)."""
    return [str(row[0]) for row in conn.execute(
        "SELECT DISTINCT command_sig FROM failures WHERE resolved_by IS NULL AND command_sig IS NOT NULL ORDER BY 1")]


# Listings: `claude-mem failures`, `/api/failures`.

def recurring(conn: sqlite3.Connection, project: str | None, minimum: int = 2,
              limit: int = 100) -> list[dict[str, Any]]:
    """Failures grouped by project and signature (command, else error), seen at least `minimum` times,
    the most recent first: count, first and last seen, the latest excerpts and the latest resolution."""
    rows = conn.execute(
        "WITH grouped AS (SELECT project, coalesce('c:' || command_sig, 'e:' || error_sig) AS sig,"
        " COUNT(*) AS times, MIN(at) AS first_at, MAX(event_id) AS last_event,"
        " MAX(resolved_by) AS resolved_by, SUM(resolved_by IS NULL) AS open"
        " FROM failures WHERE (? IS NULL OR project = ?) GROUP BY 1, 2 HAVING COUNT(*) >= ?)"
        " SELECT g.project, g.sig, g.times, g.first_at, l.at, l.program, l.command_text, l.error_text,"
        " g.open, r.resolved_by, r.resolved_at, r.fix_from, r.fix, l.event_id"
        " FROM grouped g JOIN failures l ON l.event_id = g.last_event"
        " LEFT JOIN failures r ON r.event_id = (SELECT MAX(event_id) FROM failures x WHERE x.project = g.project"
        "   AND x.resolved_by = g.resolved_by)"
        " ORDER BY l.at DESC LIMIT ?", (project, project, minimum, limit)).fetchall()
    keys = ("project", "signature", "count", "first_seen", "last_seen", "program", "command", "error", "open",
            "resolved_by", "resolved_at", "fix_from", "fix", "last_event")
    return [dict(zip(keys, row)) for row in rows]


def note_totals(conn: sqlite3.Connection, project: str | None, since: str) -> dict[str, int]:
    """What the hooks' failure notes since `since` (for one project, or all) led to: {notes, beside_failure,
    before_retry, sessions, resolved_after (a noted failure the same session then resolved), named_used (a
    note whose named observations the same session then used: fetched, found or cited)}, for "memory in use"."""
    row = conn.execute(
        "SELECT COUNT(*), coalesce(SUM(n.via = 'failure'), 0), coalesce(SUM(n.via = 'retry'), 0),"
        " COUNT(DISTINCT n.session_id),"
        " coalesce(SUM(EXISTS (SELECT 1 FROM failures f JOIN pending_events r ON r.id = f.resolved_by"
        "   WHERE f.event_id = n.event_id AND r.session_id = n.session_id)), 0),"
        " coalesce(SUM(EXISTS (SELECT 1 FROM json_each(n.observations) j JOIN used u"
        "   ON u.observation_id = j.value AND u.session_id = n.session_id AND u.last_at >= n.at)), 0)"
        " FROM failure_notes n JOIN sessions s ON s.id = n.session_id"
        " WHERE n.at >= ? AND (? IS NULL OR s.project = ?)", (since, project, project)).fetchone()
    keys = ("notes", "beside_failure", "before_retry", "sessions", "resolved_after", "named_used")
    return dict(zip(keys, (int(value) for value in row)))
