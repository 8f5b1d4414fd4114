"""Paged lists of what is stored, newest first: summaries, prompts, sessions, and the project catalog.

Observations are listed by `search.search(conn, None, …)`; these cover the other tables the same
way (`{"items": [...], "total": n}`, filters by project and date range, limit/offset).
"""

import sqlite3

from claude_mem import project as projects
from claude_mem.recall.common import RecallError, parse_time, row_dict
from claude_mem.recall.search import MAX_LIMIT

SESSION_STATUSES = ("active", "completed", "failed", "interrupted")


def _check_page(limit: int, offset: int) -> None:
    if not 0 < limit <= MAX_LIMIT or offset < 0:
        raise RecallError(f"limit must be 1..{MAX_LIMIT} and offset ≥ 0")


def _filters(column: str, project_column: str, project: str | None, since: str | None,
             until: str | None) -> tuple[list[str], list]:
    where, args = [], []
    if project:
        where.append(f"{project_column} = ?")
        args.append(project)
    if since:
        where.append(f"{column} >= ?")
        args.append(parse_time(since))
    if until:
        where.append(f"{column} < ?")
        args.append(parse_time(until, end_of_day=True))
    return where, args


def _page(conn: sqlite3.Connection, select: str, source: str, where: list[str], args: list, order: str,
          limit: int, offset: int) -> dict:
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    total = conn.execute(f"SELECT COUNT(*) {source}{clause}", args).fetchone()[0]
    cursor = conn.execute(f"{select} {source}{clause} ORDER BY {order} LIMIT ? OFFSET ?", (*args, limit, offset))
    return {"items": [row_dict(cursor, row) for row in cursor.fetchall()], "total": total}


def summaries(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
              until: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """Turn summaries, newest first, each with its session's Claude Code id."""
    _check_page(limit, offset)
    where, args = _filters("s.created_at", "s.project", project, since, until)
    select = "SELECT 'summary' AS kind, 'S' || s.id AS ref, s.*, ss.content_session_id AS content_session_id"
    source = "FROM summaries s JOIN sessions ss ON ss.id = s.session_id"
    return _page(conn, select, source, where, args, "s.created_at DESC, s.id DESC", limit, offset)


def prompts(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
            until: str | None = None, limit: int = 20, offset: int = 0, session: str | None = None) -> dict:
    """User prompts (private ones never), newest first, with their session's project and Claude Code id."""
    _check_page(limit, offset)
    where, args = _filters("p.created_at", "ss.project", project, since, until)
    where.append("p.private = 0")
    if session:
        where.append("ss.content_session_id = ?")
        args.append(session)
    select = ("SELECT 'prompt' AS kind, 'P' || p.id AS ref, p.id, p.session_id, p.prompt_number, p.text,"
              " p.created_at, ss.project AS project, ss.content_session_id AS content_session_id")
    source = "FROM prompts p JOIN sessions ss ON ss.id = p.session_id"
    return _page(conn, select, source, where, args, "p.created_at DESC, p.id DESC", limit, offset)


def sessions(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
             until: str | None = None, limit: int = 20, offset: int = 0, status: str | None = None) -> dict:
    """Claude Code sessions by last activity, newest first, with how much each produced."""
    _check_page(limit, offset)
    if status and status not in SESSION_STATUSES:
        raise RecallError(f"unknown session status {status!r} (known: {', '.join(SESSION_STATUSES)})")
    where, args = _filters("s.last_activity_at", "s.project", project, since, until)
    if status:
        where.append("s.status = ?")
        args.append(status)
    select = (
        "SELECT s.id, s.content_session_id, s.project, s.cwd, s.title, s.status, s.observer_provider,"
        " s.started_at, s.ended_at, s.last_activity_at,"
        " (SELECT COUNT(*) FROM prompts p WHERE p.session_id = s.id AND p.private = 0) AS prompts,"
        " (SELECT COUNT(*) FROM observations o WHERE o.session_id = s.id) AS observations,"
        " (SELECT COUNT(*) FROM summaries m WHERE m.session_id = s.id) AS summaries,"
        " (SELECT COUNT(*) FROM pending_events e WHERE e.session_id = s.id AND e.status = 'failed') AS failed_events"
    )
    return _page(conn, select, "FROM sessions s", where, args, "s.last_activity_at DESC, s.id DESC", limit, offset)


def catalog(conn: sqlite3.Connection) -> list[dict]:
    """Every project with its display name and counts, most recently active first."""
    counts: dict[str, dict] = {}

    def add(sql: str, field: str) -> None:
        for key, count, latest in conn.execute(sql):
            entry = counts.setdefault(key, {"sessions": 0, "observations": 0, "summaries": 0, "prompts": 0,
                                            "last_activity_at": None})
            entry[field] = count
            if latest and (entry["last_activity_at"] is None or latest > entry["last_activity_at"]):
                entry["last_activity_at"] = latest

    add("SELECT project, COUNT(*), MAX(last_activity_at) FROM sessions GROUP BY project", "sessions")
    add("SELECT project, COUNT(*), MAX(created_at) FROM observations GROUP BY project", "observations")
    add("SELECT project, COUNT(*), MAX(created_at) FROM summaries GROUP BY project", "summaries")
    add("SELECT s.project, COUNT(*), MAX(p.created_at) FROM prompts p JOIN sessions s ON s.id = p.session_id"
        " WHERE p.private = 0 GROUP BY s.project", "prompts")
    names = projects.display_names(list(counts))
    found = [{"project": key, "name": names[key], **entry} for key, entry in counts.items()]
    found.sort(key=lambda entry: (entry["last_activity_at"] or "", entry["project"]), reverse=True)
    return found
