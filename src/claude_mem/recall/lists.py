"""Paged lists of what is stored, newest first: summaries, prompts, sessions, and the project catalog.

Observations are listed by `search.search(conn, None, …)`; these cover the other tables the same
way (`{"items": [...], "total": n}`, filters by project and date range, limit/offset).
"""

import sqlite3

from claude_mem import project as projects
from claude_mem.domain import SESSION_STATUSES, RecallError
from claude_mem.index.query import MAX_LIMIT
from claude_mem.recall.common import parse_time
from claude_mem.store import memory

__all__ = ["SESSION_STATUSES", "catalog", "prompts", "sessions", "summaries"]


def _check_page(limit: int, offset: int) -> None:
    if not 0 < limit <= MAX_LIMIT or offset < 0:
        raise RecallError(f"limit must be 1..{MAX_LIMIT} and offset ≥ 0")


def _range(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """`since` and `until` as the store's timestamps (a bare `until` date includes that day)."""
    return (parse_time(since) if since else None), (parse_time(until, end_of_day=True) if until else None)


def summaries(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
              until: str | None = None, limit: int = 20, offset: int = 0) -> dict:
    """Turn summaries, newest first, each with its session's Claude Code id."""
    _check_page(limit, offset)
    return memory.summaries_page(conn, project, *_range(since, until), limit, offset)


def prompts(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
            until: str | None = None, limit: int = 20, offset: int = 0, session: str | None = None) -> dict:
    """User prompts (private ones never), newest first, with their session's project and Claude Code id."""
    _check_page(limit, offset)
    return memory.prompts_page(conn, project, *_range(since, until), limit, offset, session=session)


def sessions(conn: sqlite3.Connection, project: str | None = None, since: str | None = None,
             until: str | None = None, limit: int = 20, offset: int = 0, status: str | None = None) -> dict:
    """Claude Code sessions by last activity, newest first, with how much each produced."""
    _check_page(limit, offset)
    if status and status not in SESSION_STATUSES:
        raise RecallError(f"unknown session status {status!r} (known: {', '.join(SESSION_STATUSES)})")
    return memory.sessions_page(conn, project, *_range(since, until), limit, offset, status=status)


def catalog(conn: sqlite3.Connection) -> list[dict]:
    """Every project with its display name and counts, most recently active first."""
    counts = memory.project_counts(conn)
    names = projects.display_names(list(counts))
    found = [{"project": key, "name": names[key], **entry} for key, entry in counts.items()]
    found.sort(key=lambda entry: (entry["last_activity_at"] or "", entry["project"]), reverse=True)
    return found
