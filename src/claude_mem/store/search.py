"""The search repository: every query behind keyword search and the timeline (DESIGN §6).

FTS5 BM25 over observations, summaries and prompts, the filters (project, type, date range, file,
concept), highlighted snippets, and the rows around a moment for the timeline. Callers hand in a
ready FTS5 MATCH expression (`index.fts` builds it from user text) and timestamps already in the
store's format; validation, merging the kinds and paging stay in `index`.
"""

import sqlite3
from dataclasses import dataclass, replace
from typing import Any, cast

from claude_mem.store.context import OBSERVATION_WEIGHTS
from claude_mem.store.memory import MAX_ROW_ID
from claude_mem.store.rows import SearchHit

SUMMARY_WEIGHTS = "4.0, 1.0, 2.0, 2.0, 1.0, 1.0"


Hit = SearchHit
# A timeline row: kind, id, ref, created_at, project, type, title, subtitle, session_id (and
# `anchor`, set by the caller that knows the anchor).
TimelineRow = dict[str, Any]


@dataclass(frozen=True)
class SearchFilters:
    """What narrows a search besides its text. Timestamps are in the store's format already."""

    project: str | None = None
    types: tuple[str, ...] = ()
    since: str | None = None  # inclusive
    until: str | None = None  # exclusive
    file: str | None = None  # a substring of a path read or modified
    concept: str | None = None  # one concept tag, case-insensitive
    author: str | None = None  # team memory: rows pulled from this teammate (observations only)

    @property
    def observations_only(self) -> bool:
        """Type, file and concept describe observations, so summaries and prompts never match them."""
        return bool(self.types or self.file or self.concept or self.author)


# -- helpers ------------------------------------------------------------------------------------------


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _order_sql(order: str, score: str, created: str) -> str:
    if order == "newest":
        return f"{created} DESC, id DESC"
    if order == "oldest":
        return f"{created} ASC, id ASC"
    return f"{score} ASC, {created} DESC"


def _hits(cursor: sqlite3.Cursor) -> list[Hit]:
    names = [column[0] for column in cursor.description]
    return [cast(Hit, dict(zip(names, row))) for row in cursor]


# -- observations -------------------------------------------------------------------------------------


def observation_filters(filters: SearchFilters) -> tuple[list[str], list[object]]:
    """SQL conditions on `o` (observations) for every filter except the text match."""
    where: list[str] = []
    args: list[object] = []
    if filters.project:
        where.append("o.project = ?")
        args.append(filters.project)
    if filters.types:
        where.append(f"o.type IN ({', '.join('?' for _ in filters.types)})")
        args.extend(filters.types)
    if filters.since:
        where.append("o.created_at >= ?")
        args.append(filters.since)
    if filters.until:
        where.append("o.created_at < ?")
        args.append(filters.until)
    if filters.file:
        where.append(
            "(EXISTS (SELECT 1 FROM json_each(o.files_read) WHERE value LIKE ? ESCAPE '\\')"
            " OR EXISTS (SELECT 1 FROM json_each(o.files_modified) WHERE value LIKE ? ESCAPE '\\'))"
        )
        pattern = f"%{_escape_like(filters.file)}%"
        args.extend([pattern, pattern])
    if filters.concept:
        where.append("EXISTS (SELECT 1 FROM json_each(o.concepts) WHERE lower(value) = lower(?))")
        args.append(filters.concept)
    if filters.author:
        where.append("o.author = ?")
        args.append(filters.author)
    return where, args


_OBSERVATION_SELECT = (
    "SELECT 'observation' AS kind, o.id AS id, '#' || o.id AS ref, o.created_at AS created_at,"
    " o.project AS project, o.type AS type, o.title AS title, o.subtitle AS subtitle,"
    " substr(o.narrative, 1, 160) AS snippet, {score} AS score, o.session_id AS session_id, o.author AS author,"
    " o.superseded_by AS superseded_by"
)
_RANK = f"bm25(observations_fts, {OBSERVATION_WEIGHTS})"
_FTS_JOIN = " FROM observations_fts CROSS JOIN observations o ON o.id = observations_fts.rowid"


def _only_project(conn: sqlite3.Connection, project: str) -> bool:
    """True when every observation belongs to `project` (two index lookups), so the filter is moot."""
    low, high = conn.execute(
        "SELECT (SELECT MIN(project) FROM observations), (SELECT MAX(project) FROM observations)"
    ).fetchone()
    return bool(low == high == project)


def observations_by_id(conn: sqlite3.Connection, ids: list[int]) -> dict[int, Hit]:
    """The hit rows of these observations (score 0.0: the caller ranks them)."""
    found: dict[int, Hit] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for hit in _hits(conn.execute(_OBSERVATION_SELECT.format(score="0.0") + " FROM observations o"
                                      f" WHERE o.id IN ({', '.join('?' for _ in chunk)})", chunk)):
            found[int(hit["id"])] = hit
    return found


def observation_hits(conn: sqlite3.Connection, expression: str | None, filters: SearchFilters, order: str,
                     want: int) -> tuple[int, list[Hit]]:
    """(total, the first `want` observations in `order`); no `expression` lists by the filters alone.

    Relevance ranking reads the FTS index alone whenever it can: ranking its top candidates and
    filtering those is exact as long as enough candidates survive the filters (otherwise the
    full join runs), and it avoids a table lookup for every one of thousands of matches.
    """
    if expression and filters.project and _only_project(conn, filters.project):
        filters = replace(filters, project=None)
    where, args = observation_filters(filters)
    condition = " AND ".join(where)
    full_args: list[object]
    if not expression:
        source, score = " FROM observations o", "0.0"
        full_where, full_args = (" WHERE " + condition if where else ""), args
    else:
        source, score = _FTS_JOIN, _RANK
        full_where = " WHERE observations_fts MATCH ?" + (" AND " + condition if where else "")
        full_args = [expression, *args]
    if expression and not where:
        total = conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?",
                             (expression,)).fetchone()[0]
    else:
        total = conn.execute("SELECT COUNT(*)" + source + full_where, full_args).fetchone()[0]
    if expression and order == "relevance":
        candidates = want if not where else want * 4 + 100
        ranked = (
            f"WITH ranked AS (SELECT rowid AS rid, {_RANK} AS score FROM observations_fts"
            " WHERE observations_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) "
        )
        rows = _hits(conn.execute(
            ranked + _OBSERVATION_SELECT.format(score="score") + " FROM ranked JOIN observations o ON o.id = ranked.rid"
            + (" WHERE " + condition if where else "") + " ORDER BY score, o.id DESC LIMIT ?",
            (expression, candidates, *args, want),
        ))
        if len(rows) == want or not where or total == len(rows):
            return total, rows
    rows = _hits(conn.execute(
        _OBSERVATION_SELECT.format(score=score) + source + full_where
        + f" ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?",
        (*full_args, want),
    ))
    return total, rows


def add_snippets(conn: sqlite3.Connection, expression: str, items: list[Hit]) -> None:
    """Highlighted snippets for the page only (snippet() is costly; never for every match)."""
    ids = [item["id"] for item in items if item["kind"] == "observation"]
    if not ids or not expression:
        return
    found = dict(conn.execute(
        "SELECT rowid, snippet(observations_fts, 2, '[', ']', '…', 12) FROM observations_fts"
        f" WHERE observations_fts MATCH ? AND rowid IN ({', '.join('?' for _ in ids)})",
        (expression, *ids),
    ).fetchall())
    for item in items:
        if item["kind"] == "observation" and found.get(item["id"]):
            item["snippet"] = found[item["id"]]


# -- summaries and prompts ----------------------------------------------------------------------------


def _scope(where: list[str], args: list[object], filters: SearchFilters, project: str, created: str) -> None:
    """Add the project and date-range filters on the given columns."""
    for column, op, value in ((project, "=", filters.project), (created, ">=", filters.since),
                              (created, "<", filters.until)):
        if value:
            where.append(f"{column} {op} ?")
            args.append(value)


def _ranked(conn: sqlite3.Connection, select: str, source: str, args: list[object], order: str,
            want: int) -> tuple[int, list[Hit]]:
    total = conn.execute("SELECT COUNT(*)" + source, args).fetchone()[0]
    rows = _hits(conn.execute(
        f"{select}{source} ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?", (*args, want)
    ))
    return total, rows


def summary_hits(conn: sqlite3.Connection, expression: str, filters: SearchFilters, order: str,
                 want: int) -> tuple[int, list[Hit]]:
    """(total, the first `want` summaries matching `expression` in `order`); project and dates apply."""
    where: list[str] = ["summaries_fts MATCH ?"]
    args: list[object] = [expression]
    _scope(where, args, filters, "s.project", "s.created_at")
    select = (
        "SELECT 'summary' AS kind, s.id AS id, 'S' || s.id AS ref, s.created_at AS created_at,"
        " s.project AS project, 'summary' AS type, s.request AS title, s.completed AS subtitle,"
        " snippet(summaries_fts, -1, '[', ']', '…', 12) AS snippet,"
        f" bm25(summaries_fts, {SUMMARY_WEIGHTS}) AS score, s.session_id AS session_id"
    )
    source = " FROM summaries_fts JOIN summaries s ON s.id = summaries_fts.rowid WHERE " + " AND ".join(where)
    return _ranked(conn, select, source, args, order, want)


def prompt_hits(conn: sqlite3.Connection, expression: str, filters: SearchFilters, order: str,
                want: int) -> tuple[int, list[Hit]]:
    """(total, the first `want` non-private prompts matching `expression` in `order`)."""
    where: list[str] = ["prompts_fts MATCH ?", "p.private = 0"]
    args: list[object] = [expression]
    _scope(where, args, filters, "ss.project", "p.created_at")
    select = (
        "SELECT 'prompt' AS kind, p.id AS id, 'P' || p.id AS ref, p.created_at AS created_at,"
        " ss.project AS project, 'prompt' AS type, p.text AS title, NULL AS subtitle,"
        " snippet(prompts_fts, 0, '[', ']', '…', 12) AS snippet, bm25(prompts_fts) AS score,"
        " p.session_id AS session_id"
    )
    source = (" FROM prompts_fts JOIN prompts p ON p.id = prompts_fts.rowid JOIN sessions ss ON ss.id = p.session_id"
              " WHERE " + " AND ".join(where))
    return _ranked(conn, select, source, args, order, want)


# -- timeline -----------------------------------------------------------------------------------------

_UNION = """
    SELECT 'observation' AS kind, 0 AS k, id, '#' || id AS ref, created_at, project, type, title,
           subtitle, session_id FROM observations
    UNION ALL
    SELECT 'summary', 1, id, 'S' || id, created_at, project, 'summary', request, completed, session_id
    FROM summaries
    UNION ALL
    SELECT 'prompt', 2, p.id, 'P' || p.id, p.created_at, s.project, 'prompt', p.text, NULL, p.session_id
    FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE p.private = 0
"""
# Rows at the same instant come in this order (the `k` column above); a bare time sorts before them.
_KIND_RANK = {"observation": 0, "summary": 1, "prompt": 2}
_TIMELINE_COLUMNS = ("kind", "id", "ref", "created_at", "project", "type", "title", "subtitle", "session_id")


def anchor_point(conn: sqlite3.Connection, kind: str, row_id: int) -> tuple[str, str | None] | None:
    """(created_at, project) of one observation, summary or non-private prompt; None when there is none."""
    if not 0 < row_id <= MAX_ROW_ID:
        return None
    if kind == "prompt":
        row = conn.execute(
            "SELECT p.created_at, s.project FROM prompts p JOIN sessions s ON s.id = p.session_id"
            " WHERE p.id = ? AND p.private = 0", (row_id,),
        ).fetchone()
    elif kind == "summary":
        row = conn.execute("SELECT created_at, project FROM summaries WHERE id = ?", (row_id,)).fetchone()
    else:
        row = conn.execute("SELECT created_at, project FROM observations WHERE id = ?", (row_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def rows_around(conn: sqlite3.Connection, project: str | None, created_at: str, kind: str, row_id: int | None,
                before: int, after: int) -> tuple[list[TimelineRow], list[TimelineRow]]:
    """(up to `before` rows strictly before the point, oldest first; up to `after` rows from it on).

    The point is a row (`kind`, `row_id`) or, for any other `kind`, a bare moment; rows of every
    kind are ordered by time, then kind, then id. `project` None means every project.
    """
    key = (created_at, _KIND_RANK.get(kind, -1), row_id or 0)
    where = "(? IS NULL OR project = ?)"
    columns = ", ".join(_TIMELINE_COLUMNS)
    earlier = conn.execute(
        f"SELECT {columns} FROM ({_UNION}) WHERE {where} AND (created_at, k, id) < (?, ?, ?)"
        " ORDER BY created_at DESC, k DESC, id DESC LIMIT ?",
        (project, project, *key, before),
    ).fetchall()
    later = conn.execute(
        f"SELECT {columns} FROM ({_UNION}) WHERE {where} AND (created_at, k, id) >= (?, ?, ?)"
        " ORDER BY created_at, k, id LIMIT ?",
        (project, project, *key, after),
    ).fetchall()

    def rows(found: list[tuple[object, ...]]) -> list[TimelineRow]:
        return [dict(zip(_TIMELINE_COLUMNS, row)) for row in found]

    return rows(earlier[::-1]), rows(later)
