"""The memory repository: observations, summaries, prompts and sessions as recall reads them.

Records by id (counting observation fetches), paged lists of summaries, prompts and sessions, one
session with its records, the project catalog, the manual-note insert of `remember` and the counts
the MCP answers use. Whole rows come back typed (`rows.ObservationRow`, …); lists and pages as
`Record`s (a row's columns plus `kind` and `ref`), JSON list columns decoded, shaped as the CLI, HTTP
API and MCP print them. Validation, paging limits and time parsing stay in `recall`.
"""

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from claude_mem.domain import MAX_ROW_ID
from claude_mem.store import fingerprints, rows
from claude_mem.store.context import indexed_observations, observation_total
from claude_mem.store.rows import ObservationRow, SummaryRow
from claude_mem.store.transaction import transaction

# A row as a list or page shows it: some table's columns (JSON lists decoded), maybe `kind` and `ref`.
Record = dict[str, Any]
# SQLite integers are signed 64-bit: an id past `MAX_ROW_ID` names nothing (and must not raise OverflowError).


def row_dict(cursor: sqlite3.Cursor, row: Sequence[object]) -> Record:
    """A row as a dict, JSON list columns decoded."""
    return rows.decode({column[0]: value for column, value in zip(cursor.description, row)})


def _dicts(cursor: sqlite3.Cursor) -> list[Record]:
    return [row_dict(cursor, row) for row in cursor.fetchall()]


# -- projects ---------------------------------------------------------------------------------------


def project_counts(conn: sqlite3.Connection) -> dict[str, Record]:
    """Per project key: sessions, observations, summaries, public prompts and the latest activity."""
    counts: dict[str, Record] = {}
    queries = (
        ("sessions", "SELECT project, COUNT(*), MAX(last_activity_at) FROM sessions GROUP BY project"),
        ("observations", "SELECT project, COUNT(*), MAX(created_at) FROM observations GROUP BY project"),
        ("summaries", "SELECT project, COUNT(*), MAX(created_at) FROM summaries GROUP BY project"),
        ("prompts", "SELECT s.project, COUNT(*), MAX(p.created_at) FROM prompts p"
                    " JOIN sessions s ON s.id = p.session_id WHERE p.private = 0 GROUP BY s.project"),
    )
    for field, sql in queries:
        for key, count, latest in conn.execute(sql):
            entry = counts.setdefault(key, {"sessions": 0, "observations": 0, "summaries": 0, "prompts": 0,
                                            "last_activity_at": None})
            entry[field] = count
            if latest and (entry["last_activity_at"] is None or latest > entry["last_activity_at"]):
                entry["last_activity_at"] = latest
    return counts


# -- counts -------------------------------------------------------------------------------------------


def store_is_empty(conn: sqlite3.Connection) -> bool:
    """True when nothing recall can show is stored: no observation, summary or public prompt."""
    return not conn.execute(
        "SELECT EXISTS (SELECT 1 FROM observations) OR EXISTS (SELECT 1 FROM summaries)"
        " OR EXISTS (SELECT 1 FROM prompts WHERE private = 0)"
    ).fetchone()[0]


def observation_count(conn: sqlite3.Connection, project: str | None = None) -> int:
    """Observations of `project`, or of every project when it is None (the catalog's counts, m015)."""
    return indexed_observations(conn) if project is None else observation_total(conn, project)


# -- records by id --------------------------------------------------------------------------------------


def observations_by_id(conn: sqlite3.Connection, ids: Iterable[int],
                       count_fetch: bool = True) -> list[ObservationRow]:
    """Full observations in the order asked (unknown ids skipped); `count_fetch` adds one to their `fetch_count`.

    `fetch_count` is not indexed text, so the update leaves FTS alone.
    """
    wanted = [i for i in dict.fromkeys(int(i) for i in ids) if 0 < i <= MAX_ROW_ID]
    if not wanted:
        return []
    marks = ", ".join("?" for _ in wanted)
    if count_fetch:
        with transaction(conn):
            conn.execute(f"UPDATE observations SET fetch_count = fetch_count + 1 WHERE id IN ({marks})", wanted)
    found = {item["id"]: item for item in _dicts(conn.execute(f"SELECT * FROM observations WHERE id IN ({marks})",
                                                               wanted))}
    return [cast(ObservationRow, found[i]) for i in wanted if i in found]


def project_of_observation(conn: sqlite3.Connection, observation_id: int) -> str | None:
    """The project of an observation; None when there is no such observation."""
    if not 0 < observation_id <= MAX_ROW_ID:
        return None
    row = conn.execute("SELECT project FROM observations WHERE id = ?", (observation_id,)).fetchone()
    return None if row is None else str(row[0])


def mark_superseded(conn: sqlite3.Connection, new_id: int, old_id: int) -> bool:
    """`old_id` superseded by `new_id` (an older observation of the same project, no cycle); False if not."""
    from claude_mem.store import results  # the observer's writer: not loaded by every reader of memory

    with transaction(conn):
        return results.supersede(conn, new_id, old_id)


def superseded_ones(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, list[int]]:
    """Per observation id, the observations it superseded (issue 26), oldest first."""
    wanted = [i for i in dict.fromkeys(int(i) for i in ids) if 0 < i <= MAX_ROW_ID]
    found: dict[int, list[int]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        for old_id, new_id in conn.execute(
                f"SELECT id, superseded_by FROM observations WHERE superseded_by IN ({', '.join('?' for _ in chunk)})"
                " ORDER BY id", chunk):
            found.setdefault(int(new_id), []).append(int(old_id))
    return found


def summary_by_id(conn: sqlite3.Connection, summary_id: int) -> SummaryRow | None:
    if not 0 < summary_id <= MAX_ROW_ID:
        return None
    cursor = conn.execute("SELECT * FROM summaries WHERE id = ?", (summary_id,))
    row = cursor.fetchone()
    return cast(SummaryRow, row_dict(cursor, row)) if row else None


def prompt_by_id(conn: sqlite3.Connection, prompt_id: int) -> Record | None:
    """A public prompt with its session's project and Claude Code id; None for a private or unknown one."""
    if not 0 < prompt_id <= MAX_ROW_ID:
        return None
    cursor = conn.execute(
        "SELECT p.*, s.project AS project, s.content_session_id AS content_session_id FROM prompts p"
        " JOIN sessions s ON s.id = p.session_id WHERE p.id = ? AND p.private = 0",
        (prompt_id,),
    )
    row = cursor.fetchone()
    return row_dict(cursor, row) if row else None


# -- paged lists (newest first; `since`/`until` already in the store's timestamp format) --------------


def _range(column: str, project_column: str, project: str | None, since: str | None,
           until: str | None) -> tuple[list[str], list[object]]:
    where: list[str] = []
    args: list[object] = []
    if project:
        where.append(f"{project_column} = ?")
        args.append(project)
    if since:
        where.append(f"{column} >= ?")
        args.append(since)
    if until:
        where.append(f"{column} < ?")
        args.append(until)
    return where, args


def _page(conn: sqlite3.Connection, select: str, source: str, where: list[str], args: list[object], order: str,
          limit: int, offset: int) -> Record:
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    total = conn.execute(f"SELECT COUNT(*) {source}{clause}", args).fetchone()[0]
    cursor = conn.execute(f"{select} {source}{clause} ORDER BY {order} LIMIT ? OFFSET ?", (*args, limit, offset))
    return {"items": _dicts(cursor), "total": total}


def summaries_page(conn: sqlite3.Connection, project: str | None, since: str | None, until: str | None,
                   limit: int, offset: int) -> Record:
    """`{items, total}`: summaries, each with its session's Claude Code id."""
    where, args = _range("s.created_at", "s.project", project, since, until)
    select = "SELECT 'summary' AS kind, 'S' || s.id AS ref, s.*, ss.content_session_id AS content_session_id"
    source = "FROM summaries s JOIN sessions ss ON ss.id = s.session_id"
    return _page(conn, select, source, where, args, "s.created_at DESC, s.id DESC", limit, offset)


def prompts_page(conn: sqlite3.Connection, project: str | None, since: str | None, until: str | None,
                 limit: int, offset: int, session: str | None = None) -> Record:
    """`{items, total}`: public prompts with their session's project and Claude Code id."""
    where, args = _range("p.created_at", "ss.project", project, since, until)
    where.append("p.private = 0")
    if session:
        where.append("ss.content_session_id = ?")
        args.append(session)
    select = ("SELECT 'prompt' AS kind, 'P' || p.id AS ref, p.id, p.session_id, p.prompt_number, p.text,"
              " p.created_at, ss.project AS project, ss.content_session_id AS content_session_id")
    source = "FROM prompts p JOIN sessions ss ON ss.id = p.session_id"
    return _page(conn, select, source, where, args, "p.created_at DESC, p.id DESC", limit, offset)


_SESSION_SELECT = (
    "SELECT s.id, s.content_session_id, s.project, s.cwd, s.title, s.status, s.observer_provider,"
    " s.started_at, s.ended_at, s.last_activity_at, s.author,"
    " (SELECT COUNT(*) FROM prompts p WHERE p.session_id = s.id AND p.private = 0) AS prompts,"
    " (SELECT COUNT(*) FROM observations o WHERE o.session_id = s.id) AS observations,"
    " (SELECT COUNT(*) FROM summaries m WHERE m.session_id = s.id) AS summaries,"
    " (SELECT COUNT(*) FROM pending_events e WHERE e.session_id = s.id AND e.status = 'failed') AS failed_events"
)


def sessions_page(conn: sqlite3.Connection, project: str | None, since: str | None, until: str | None,
                  limit: int, offset: int, status: str | None = None) -> Record:
    """`{items, total}`: sessions by last activity, with how many prompts, observations, summaries and
    failed events each has, and their author (None for this machine's own; a teammate's for team memory)."""
    where, args = _range("s.last_activity_at", "s.project", project, since, until)
    if status:
        where.append("s.status = ?")
        args.append(status)
    return _page(conn, _SESSION_SELECT, "FROM sessions s", where, args, "s.last_activity_at DESC, s.id DESC", limit,
                 offset)


def session_by_content_id(conn: sqlite3.Connection, content_session_id: str) -> Record | None:
    """One session as `sessions_page` lists it, named by its Claude Code id; None when unknown."""
    cursor = conn.execute(f"{_SESSION_SELECT} FROM sessions s WHERE s.content_session_id = ?", (content_session_id,))
    row = cursor.fetchone()
    return row_dict(cursor, row) if row else None


def session_records(conn: sqlite3.Connection, session_id: int, limit: int) -> dict[str, list[Record]]:
    """A session's public prompts, observations and summaries (at most `limit` of each), oldest first."""
    queries = {
        "prompt": "SELECT 'prompt' AS kind, 'P' || id AS ref, id, prompt_number, created_at, text FROM prompts"
                  " WHERE session_id = ? AND private = 0",
        "observation": "SELECT 'observation' AS kind, '#' || id AS ref, id, prompt_number, created_at,"
                       f" {rows.select(rows.OBSERVATION_CONTENT)} FROM observations WHERE session_id = ?",
        "summary": "SELECT 'summary' AS kind, 'S' || id AS ref, id, prompt_number, created_at,"
                   f" {rows.select(rows.SUMMARY_CONTENT)} FROM summaries WHERE session_id = ?",
    }
    return {kind: _dicts(conn.execute(f"{sql} ORDER BY created_at, id LIMIT ?", (session_id, limit)))
            for kind, sql in queries.items()}


# -- manual notes -----------------------------------------------------------------------------------------


def add_manual_observation(conn: sqlite3.Connection, project: str, kind: str, title: str, narrative: str,
                           content_hash: str, files: Sequence[Mapping[str, object]] = ()) -> tuple[ObservationRow, bool]:
    """(the stored note, whether it is new): a note with no session, stored once per project and hash;
    `files` (fingerprints) are recorded as the files it is about (a path already recorded is kept)."""
    with transaction(conn):
        existing = conn.execute(
            "SELECT id FROM observations WHERE session_id IS NULL AND project = ? AND content_hash = ?",
            (project, content_hash),
        ).fetchone()
        if existing is None:
            row_id = conn.execute(
                "INSERT INTO observations (session_id, project, type, title, narrative, concepts, content_hash)"
                " VALUES (NULL, ?, ?, ?, ?, '[\"manual\"]', ?)",
                (project, kind, title, narrative, content_hash),
            ).lastrowid
        else:
            row_id = existing[0]
        if files and row_id is not None:
            fingerprints.add(conn, row_id, files)
    cursor = conn.execute("SELECT * FROM observations WHERE id = ?", (row_id,))
    return cast(ObservationRow, row_dict(cursor, cursor.fetchone())), existing is None
