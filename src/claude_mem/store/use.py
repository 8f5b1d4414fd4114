"""Memory in use (issue 30, m018): the queries behind "was the memory this session got ever used?".

What a session was shown is written by the hooks (`store.context.record_injection`, `record_shown`);
what it used is derived by the worker from the captured events (`recall.use`), which reads them here in
id order past a watermark (`counters.use_scanned_event`) and records the uses with the new watermark in
one transaction, so an event is counted once. The report side counts, for a window starting at `since`
(a stored timestamp; rows at or after it count) and one project or all (`project` None):

- shown: (session, observation) pairs first shown in the window; used: pairs used in it;
- used of shown: pairs shown in the window that the same session then used (the use rate's numerator);
- tokens injected: what the session-start index and the prompts' added memories cost.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from claude_mem.store.transaction import transaction

WATERMARK = "use_scanned_event"
_PROJECT = "(? IS NULL OR s.project = ?)"


def scanned(conn: sqlite3.Connection) -> int:
    """The id of the last captured event the use derivation has read (0: none yet)."""
    row = conn.execute("SELECT value FROM counters WHERE name = ?", (WATERMARK,)).fetchone()
    return int(row[0]) if row else 0


def events_after(conn: sqlite3.Connection, after: int, limit: int) -> list[tuple[int, int, str, str, str]]:
    """(id, session id, kind, payload JSON, captured at) of the next `limit` captured events after `after`."""
    return [(int(row[0]), int(row[1]), str(row[2]), str(row[3]), str(row[4])) for row in conn.execute(
        "SELECT id, session_id, kind, payload, created_at FROM pending_events WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit))]


def waiting(conn: sqlite3.Connection) -> int:
    """Captured events the use derivation has not read yet."""
    return int(conn.execute("SELECT COUNT(*) FROM pending_events WHERE id > ?", (scanned(conn),)).fetchone()[0])


def session_memory(conn: sqlite3.Connection, session_id: int) -> dict[int, str]:
    """Observation id -> title of everything the session was shown or used so far: what it may cite."""
    return {int(row[0]): str(row[1]) for row in conn.execute(
        "SELECT o.id, o.title FROM observations o WHERE o.id IN"
        " (SELECT observation_id FROM shown WHERE session_id = ?"
        "  UNION SELECT observation_id FROM used WHERE session_id = ?)", (session_id, session_id))}


def titles(conn: sqlite3.Connection, ids: set[int]) -> dict[int, str]:
    """id -> title of the ids of `ids` that are stored observations (a reply may name any number)."""
    found: dict[int, str] = {}
    listed = sorted(ids)
    for start in range(0, len(listed), 500):
        chunk = listed[start:start + 500]
        marks = ", ".join("?" for _ in chunk)
        found.update((int(row[0]), str(row[1])) for row in conn.execute(
            f"SELECT id, title FROM observations WHERE id IN ({marks})", chunk))
    return found


def record_used(conn: sqlite3.Connection, uses: list[tuple[int, int, str, str]], scanned_to: int) -> None:
    """Record `uses` (session id, observation id, how, at) and move the watermark to `scanned_to`, at once.
    A use seen again adds to `times` and moves `last_at`; a session or observation gone since is skipped."""
    with transaction(conn):
        conn.executemany(
            "INSERT INTO used (session_id, observation_id, how, at, last_at)"
            " SELECT ?1, ?2, ?3, ?4, ?4 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)"
            " AND EXISTS (SELECT 1 FROM observations WHERE id = ?2)"
            " ON CONFLICT (session_id, observation_id, how) DO UPDATE SET times = times + 1,"
            " last_at = max(last_at, excluded.last_at)", uses)
        conn.execute("INSERT INTO counters (name, value) VALUES (?, ?)"
                     " ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)", (WATERMARK, scanned_to))


def totals(conn: sqlite3.Connection, project: str | None, since: str) -> dict[str, int]:
    """{sessions, shown, used, used_of_shown, tokens_injected, injections, fetched, searched, cited} since `since`."""
    args = (since, project, project)
    sessions, injections, tokens = conn.execute(
        "SELECT COUNT(DISTINCT i.session_id), COUNT(*), COALESCE(SUM(i.tokens), 0) FROM injections i"
        f" JOIN sessions s ON s.id = i.session_id WHERE i.at >= ? AND {_PROJECT}", args).fetchone()
    shown, used_of_shown = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(EXISTS (SELECT 1 FROM used u WHERE u.session_id = h.session_id"
        " AND u.observation_id = h.observation_id)), 0) FROM shown h"
        f" JOIN sessions s ON s.id = h.session_id WHERE h.at >= ? AND {_PROJECT}", args).fetchone()
    ways = dict(conn.execute(
        "SELECT u.how, COUNT(*) FROM used u JOIN sessions s ON s.id = u.session_id"
        f" WHERE u.at >= ? AND {_PROJECT} GROUP BY u.how", args).fetchall())
    used = conn.execute(
        "SELECT COUNT(*) FROM (SELECT DISTINCT u.session_id, u.observation_id FROM used u"
        f" JOIN sessions s ON s.id = u.session_id WHERE u.at >= ? AND {_PROJECT})", args).fetchone()[0]
    return {"sessions": int(sessions), "shown": int(shown), "used": int(used), "used_of_shown": int(used_of_shown),
            "tokens_injected": int(tokens), "injections": int(injections),
            **{how: int(ways.get(how, 0)) for how in ("fetched", "searched", "cited")}}


def per_day(conn: sqlite3.Connection, project: str | None, since: str) -> list[tuple[str, int, int, int]]:
    """(UTC day, shown, used of shown, tokens injected) for each day since `since` with any, oldest first."""
    args = (since, project, project)
    days: dict[str, list[int]] = {}
    for day, shown, used in conn.execute(
            "SELECT substr(h.at, 1, 10) AS day, COUNT(*), SUM(EXISTS (SELECT 1 FROM used u WHERE"
            " u.session_id = h.session_id AND u.observation_id = h.observation_id)) FROM shown h"
            f" JOIN sessions s ON s.id = h.session_id WHERE h.at >= ? AND {_PROJECT} GROUP BY day", args):
        days.setdefault(str(day), [0, 0, 0])[:2] = [int(shown), int(used or 0)]
    for day, tokens in conn.execute(
            "SELECT substr(i.at, 1, 10) AS day, SUM(i.tokens) FROM injections i JOIN sessions s ON s.id = i.session_id"
            f" WHERE i.at >= ? AND {_PROJECT} GROUP BY day", args):
        days.setdefault(str(day), [0, 0, 0])[2] = int(tokens or 0)
    return [(day, *values) for day, values in sorted(days.items())]  # type: ignore[misc]


_RANKED = """
    SELECT o.id, o.project, o.type, o.title, o.created_at,
           (SELECT COUNT(*) FROM shown h WHERE h.observation_id = o.id AND h.at >= :since) AS shown,
           (SELECT COUNT(DISTINCT u.session_id) FROM used u WHERE u.observation_id = o.id AND u.at >= :since) AS used,
           (SELECT MAX(u.last_at) FROM used u WHERE u.observation_id = o.id) AS last_used
    FROM observations o WHERE o.id IN ({candidates})
"""


def most_used(conn: sqlite3.Connection, project: str | None, since: str, limit: int) -> list[dict[str, Any]]:
    """The observations used by the most sessions since `since`: {id, project, type, title, created_at,
    shown, used, last_used}, most used first."""
    candidates = ("SELECT u.observation_id FROM used u JOIN observations c ON c.id = u.observation_id"
                  " WHERE u.at >= :since AND (:project IS NULL OR c.project = :project) GROUP BY u.observation_id"
                  " ORDER BY COUNT(DISTINCT u.session_id) DESC, MAX(u.last_at) DESC LIMIT :limit")
    return _ranked(conn, candidates, project, since, limit, "used DESC, last_used DESC, o.id DESC")


def least_used(conn: sqlite3.Connection, project: str | None, since: str, limit: int) -> list[dict[str, Any]]:
    """The observations shown most often since `since` that no session then used: context that costs
    tokens and does not pay (most shown first)."""
    candidates = ("SELECT h.observation_id FROM shown h JOIN observations c ON c.id = h.observation_id"
                  " WHERE h.at >= :since AND (:project IS NULL OR c.project = :project) AND NOT EXISTS"
                  " (SELECT 1 FROM used u WHERE u.observation_id = h.observation_id) GROUP BY h.observation_id"
                  " ORDER BY COUNT(*) DESC, h.observation_id DESC LIMIT :limit")
    return _ranked(conn, candidates, project, since, limit, "shown DESC, o.id DESC")


def _ranked(conn: sqlite3.Connection, candidates: str, project: str | None, since: str, limit: int,
            order: str) -> list[dict[str, Any]]:
    sql = _RANKED.format(candidates=candidates) + f" ORDER BY {order} LIMIT :limit"
    cursor = conn.execute(sql, {"since": since, "project": project, "limit": limit})
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def sessions(conn: sqlite3.Connection, project: str | None, since: str, limit: int) -> list[dict[str, Any]]:
    """The newest sessions given memory since `since`: {session, project, started_at, shown, used,
    used_of_shown, tokens_injected}, newest first."""
    cursor = conn.execute(
        "SELECT s.content_session_id AS session, s.project, s.started_at,"
        " (SELECT COUNT(*) FROM shown h WHERE h.session_id = s.id) AS shown,"
        " (SELECT COUNT(DISTINCT u.observation_id) FROM used u WHERE u.session_id = s.id) AS used,"
        " (SELECT COUNT(*) FROM shown h WHERE h.session_id = s.id AND EXISTS (SELECT 1 FROM used u"
        "  WHERE u.session_id = s.id AND u.observation_id = h.observation_id)) AS used_of_shown,"
        " (SELECT COALESCE(SUM(i.tokens), 0) FROM injections i WHERE i.session_id = s.id) AS tokens_injected"
        f" FROM sessions s WHERE s.id IN (SELECT session_id FROM injections WHERE at >= ?) AND {_PROJECT}"
        " ORDER BY s.started_at DESC, s.id DESC LIMIT ?", (since, project, project, limit))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def of_observations(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    """id -> {shown, used, last_used} over all time: sessions shown it, sessions that used it, when last."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    return {int(row[0]): {"shown": int(row[1]), "used": int(row[2]), "last_used": row[3]} for row in conn.execute(
        "SELECT o.id, (SELECT COUNT(*) FROM shown h WHERE h.observation_id = o.id),"
        " (SELECT COUNT(DISTINCT u.session_id) FROM used u WHERE u.observation_id = o.id),"
        f" (SELECT MAX(u.last_at) FROM used u WHERE u.observation_id = o.id) FROM observations o WHERE o.id IN ({marks})",
        ids)}


def per_project(conn: sqlite3.Connection, since: str, limit: int) -> list[dict[str, Any]]:
    """{project, sessions, shown, used_of_shown, tokens_injected} of each project given memory since `since`,
    most sessions first."""
    cursor = conn.execute(
        "SELECT s.project, COUNT(DISTINCT i.session_id) AS sessions, COALESCE(SUM(i.tokens), 0) AS tokens_injected,"
        " (SELECT COUNT(*) FROM shown h JOIN sessions t ON t.id = h.session_id"
        "  WHERE t.project = s.project AND h.at >= :since) AS shown,"
        " (SELECT COUNT(*) FROM shown h JOIN sessions t ON t.id = h.session_id WHERE t.project = s.project"
        "  AND h.at >= :since AND EXISTS (SELECT 1 FROM used u WHERE u.session_id = h.session_id"
        "  AND u.observation_id = h.observation_id)) AS used_of_shown"
        " FROM injections i JOIN sessions s ON s.id = i.session_id WHERE i.at >= :since"
        " GROUP BY s.project ORDER BY sessions DESC, s.project LIMIT :limit", {"since": since, "limit": limit})
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
