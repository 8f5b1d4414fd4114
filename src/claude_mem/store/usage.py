"""What memory costs and how it is used, per UTC day: the queries behind the stats page.

`since` is a day (`YYYY-MM-DD`) compared with the stored UTC timestamps as text, so rows of that
day on are counted; `project` None means every project. Days are the first ten characters of a
timestamp (`substr(created_at, 1, 10)`), grouped in SQL.
"""

import sqlite3

_OF_PROJECT = "(? IS NULL OR project = ?)"


def observations_per_day(conn: sqlite3.Connection, project: str | None, since: str) -> list[tuple[str, str, int]]:
    """(day, type, count) of the observations stored since `since`, oldest day first."""
    return [(str(day), str(kind), int(count)) for day, kind, count in conn.execute(
        "SELECT substr(created_at, 1, 10) AS day, type, COUNT(*) FROM observations"
        f" WHERE created_at >= ? AND {_OF_PROJECT} GROUP BY day, type ORDER BY day, type",
        (since, project, project),
    )]


def observer_tokens_per_day(conn: sqlite3.Connection, project: str | None, since: str) -> list[tuple[str, int, int]]:
    """(day, input tokens, output tokens) the observer spent since `since`, oldest day first.

    One observer turn stores its token counts on every observation and summary it produced (same
    session, same timestamp), so each turn is counted once: UNION keeps one of those rows.
    """
    turns = (
        "SELECT session_id, created_at, input_tokens, output_tokens FROM {table}"
        f" WHERE created_at >= ? AND {_OF_PROJECT} AND input_tokens + output_tokens > 0"
    )
    return [(str(day), int(tokens_in), int(tokens_out)) for day, tokens_in, tokens_out in conn.execute(
        "SELECT substr(created_at, 1, 10) AS day, SUM(input_tokens), SUM(output_tokens) FROM ("
        f"{turns.format(table='observations')} UNION {turns.format(table='summaries')}"
        ") GROUP BY day ORDER BY day",
        (since, project, project) * 2,
    )]


def tool_events(conn: sqlite3.Connection, project: str | None, since: str) -> int:
    """Tool calls (failed ones too) the observer finished processing since `since`."""
    return int(conn.execute(
        "SELECT COUNT(*) FROM pending_events WHERE kind IN ('tool', 'tool_failure') AND status = 'done'"
        " AND processed_at >= ? AND (? IS NULL OR session_id IN (SELECT id FROM sessions WHERE project = ?))",
        (since, project, project),
    ).fetchone()[0])


def fetches(conn: sqlite3.Connection, project: str | None) -> tuple[int, int]:
    """(observations, their fetches in full): how often stored memory was actually opened."""
    count, fetched = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(fetch_count), 0) FROM observations WHERE {_OF_PROJECT}", (project, project)
    ).fetchone()
    return int(count), int(fetched)


def full_texts(conn: sqlite3.Connection, ids: list[int]) -> list[str]:
    """The stored text of each observation (title, subtitle, narrative, facts) — what an index row stands for."""
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    return [str(text) for (text,) in conn.execute(
        "SELECT title || char(10) || COALESCE(subtitle, '') || char(10) || narrative || char(10) || facts"
        f" FROM observations WHERE id IN ({marks})", ids,
    )]


def recent_projects(conn: sqlite3.Connection, limit: int) -> list[str]:
    """The projects with observations, most recently active first."""
    return [str(key) for (key,) in conn.execute(
        "SELECT project FROM observations GROUP BY project ORDER BY MAX(created_at) DESC LIMIT ?", (limit,)
    )]
