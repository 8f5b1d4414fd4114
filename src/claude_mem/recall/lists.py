"""Paged lists of what is stored, newest first: summaries, prompts, sessions, and the project catalog.

Observations are listed by `search.search(conn, None, …)`; these cover the other tables the same
way (`{"items": [...], "total": n}`, filters by project and date range, limit/offset).
"""

import bisect

from claude_mem import project as projects
from claude_mem.domain import SESSION_STATUSES, RecallError, UnknownRecord
from claude_mem.index.query import MAX_LIMIT
from claude_mem.recall.common import display_map, parse_time
from claude_mem.store import Store, memory
from claude_mem.store.memory import Record

__all__ = ["SESSION_STATUSES", "STORY_LIMIT", "catalog", "prompts", "session_story", "sessions", "summaries"]

# Most records `session_story` returns; a longer session says `truncated`.
STORY_LIMIT = 2000
# Within one turn: the prompt, then what it caused, then the turn's summary.
_STORY_RANK = {"prompt": 0, "observation": 1, "summary": 2}


def _check_page(limit: int, offset: int) -> None:
    if not 0 < limit <= MAX_LIMIT or offset < 0:
        raise RecallError(f"limit must be 1..{MAX_LIMIT} and offset ≥ 0")


def _range(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """`since` and `until` as the store's timestamps (a bare `until` date includes that day)."""
    return (parse_time(since) if since else None), (parse_time(until, end_of_day=True) if until else None)


def summaries(conn: Store, project: str | None = None, since: str | None = None,
              until: str | None = None, limit: int = 20, offset: int = 0) -> Record:
    """Turn summaries, newest first, each with its session's Claude Code id."""
    _check_page(limit, offset)
    return memory.summaries_page(conn, project, *_range(since, until), limit, offset)


def prompts(conn: Store, project: str | None = None, since: str | None = None,
            until: str | None = None, limit: int = 20, offset: int = 0, session: str | None = None) -> Record:
    """User prompts (private ones never), newest first, with their session's project and Claude Code id."""
    _check_page(limit, offset)
    return memory.prompts_page(conn, project, *_range(since, until), limit, offset, session=session)


def sessions(conn: Store, project: str | None = None, since: str | None = None,
             until: str | None = None, limit: int = 20, offset: int = 0, status: str | None = None) -> Record:
    """Claude Code sessions by last activity, newest first, with how much each produced and the
    display `name` of their project."""
    _check_page(limit, offset)
    if status and status not in SESSION_STATUSES:
        raise RecallError(f"unknown session status {status!r} (known: {', '.join(SESSION_STATUSES)})")
    page = memory.sessions_page(conn, project, *_range(since, until), limit, offset, status=status)
    names = display_map(conn)
    page["items"] = [{**item, "name": names.get(item["project"], item["project"])} for item in page["items"]]
    return page


def session_story(conn: Store, content_session_id: str, limit: int | None = None) -> Record:
    """`{session, items, truncated}`: one session (as `sessions` lists it) and its public prompts,
    observations and summaries in story order (at most `limit`, default `STORY_LIMIT`); UnknownRecord
    when no session has that id.

    Story order is by turn (`prompt_number`), then time: a prompt before what it caused, a turn's
    summary after its observations. A record without a turn number belongs to the latest prompt
    made before it.
    """
    limit = limit or STORY_LIMIT
    session = memory.session_by_content_id(conn, content_session_id)
    if session is None:
        raise UnknownRecord(f"unknown session {content_session_id!r}")
    session["name"] = display_map(conn).get(session["project"], session["project"])
    found = memory.session_records(conn, session["id"], limit + 1)
    truncated = any(len(rows) > limit for rows in found.values())
    turns = sorted((str(row["created_at"]), int(row["prompt_number"])) for row in found["prompt"])
    starts = [created for created, _ in turns]

    def turn_of(row: Record) -> int:
        if row["prompt_number"] is not None:
            return int(row["prompt_number"])
        before = bisect.bisect_right(starts, str(row["created_at"]))
        return turns[before - 1][1] if before else 0

    items = sorted((row for rows in found.values() for row in rows[:limit]),
                   key=lambda row: (turn_of(row), _STORY_RANK[row["kind"]], str(row["created_at"]), row["id"]))
    return {"session": session, "items": items[:limit], "truncated": truncated or len(items) > limit}


def catalog(conn: Store) -> list[Record]:
    """Every project with its display name and counts, most recently active first."""
    counts = memory.project_counts(conn)
    names = projects.display_names(list(counts))
    found = [{"project": key, "name": names[key], **entry} for key, entry in counts.items()]
    found.sort(key=lambda entry: (entry["last_activity_at"] or "", entry["project"]), reverse=True)
    return found
