"""The search repository: every query behind keyword search and the timeline (DESIGN §6).

FTS5 BM25 over observations, summaries and prompts, the filters (project, type, date range, file,
concept), highlighted snippets, and the rows around a moment for the timeline. Callers hand in a
ready FTS5 MATCH expression (`index.fts` builds it from user text) and timestamps already in the
store's format; validation, merging the kinds and paging stay in `index`.

A search does no more than its page needs (issue 27): matches are counted up to `TOTAL_CAP` (past
it the total says "at least", `Matches.capped`); a narrower expression (every word of a multi-word
query) that fills the page spares ranking every row holding any word; snippets are made for the
rows returned only.
"""

import sqlite3
from dataclasses import dataclass, replace
from typing import Any, cast

from claude_mem.domain import MAX_ROW_ID
from claude_mem.store.context import CONTEXT_WEIGHT, OBSERVATION_WEIGHTS, own_text
from claude_mem.store.rows import SearchHit

SUMMARY_WEIGHTS = f"4.0, 1.0, 2.0, 2.0, 1.0, 1.0, {CONTEXT_WEIGHT}"
PROMPT_WEIGHTS = f"1.0, {CONTEXT_WEIGHT}"
# Matches are counted exactly up to this many (or the page's end, if further); past it a total is a floor.
TOTAL_CAP = 1000
# Up to this many matches, one pass over them makes a page's snippets faster than a look-up per page row
# (measured at 100k observations: ~0.35 µs a match against ~30 µs a page row, more with more words).
SNIPPETS_IN_ONE_PASS = 500


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


@dataclass(frozen=True)
class Matches:
    """The first rows of one kind's matches in order, and how many match: exactly, or at least
    `total` when `capped` (counting stopped there)."""

    total: int
    rows: list[Hit]
    capped: bool = False
    # `total` when it counts every row of the MATCH expression alone (no filter applied), else None.
    unfiltered: int | None = None
    # The ids among `rows` that match the narrow expression: they come first, whatever their score.
    first: frozenset[int] = frozenset()


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


def _count(conn: sqlite3.Connection, source: str, args: list[object] | tuple[object, ...],
           want: int) -> tuple[int, bool]:
    """(matches of `source` counted up to the cap, whether there are more): never a count of every match."""
    cap = max(TOTAL_CAP, want)
    found = conn.execute(f"SELECT COUNT(*) FROM (SELECT 1{source} LIMIT ?)", (*args, cap + 1)).fetchone()[0]
    return (cap, True) if found > cap else (found, False)


def project_is_stored(conn: sqlite3.Connection, key: str) -> bool:
    """True when `key` is the project of a session, observation or summary (index lookups only): a
    search given an exact key needs no resolving."""
    return bool(conn.execute(
        "SELECT EXISTS (SELECT 1 FROM observations WHERE project = ?) OR EXISTS (SELECT 1 FROM sessions"
        " WHERE project = ?) OR EXISTS (SELECT 1 FROM summaries WHERE project = ?)", (key, key, key),
    ).fetchone()[0] == 1)


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
                     want: int, narrow: str | None = None) -> Matches:
    """The first `want` observations matching `expression` in `order` and their count; no `expression`
    lists by the filters alone.

    `narrow` is an expression whose matches are a subset of `expression`'s (every word rather than
    any): ranked by relevance, its matches come first (`Matches.first`), then the rest of the wider
    expression's; when the narrow matches fill the page, the wider expression is only counted,
    never ranked row by row (a multi-word query holding common words would rank most of the store).
    BM25 scores a row alike under both, so each part is in the wider ranking's order.

    Relevance ranking reads the FTS index alone whenever it can: ranking its top candidates and
    filtering those is exact as long as enough candidates survive the filters (otherwise the
    full join runs), and it avoids a table lookup for every one of thousands of matches.
    """
    if expression and filters.project and _only_project(conn, filters.project):
        filters = replace(filters, project=None)
    where, args = observation_filters(filters)
    condition = " AND ".join(where)
    if not expression:
        listing = " FROM observations o" + (" WHERE " + condition if where else "")
        total = conn.execute("SELECT COUNT(*)" + listing, args).fetchone()[0]
        return Matches(total, _hits(conn.execute(
            _OBSERVATION_SELECT.format(score="0.0") + listing
            + f" ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?", (*args, want))))
    if where:
        total, capped = _count(conn, _FTS_JOIN + " WHERE observations_fts MATCH ? AND " + condition,
                               [expression, *args], want)
    else:
        total, capped = _count(conn, " FROM observations_fts WHERE observations_fts MATCH ?", [expression], want)
    unfiltered = None if where or capped else total
    if order != "relevance":
        rows = _hits(conn.execute(
            _OBSERVATION_SELECT.format(score=_RANK) + _FTS_JOIN + " WHERE observations_fts MATCH ?"
            + (" AND " + condition if where else "") + f" ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?",
            (expression, *args, want),
        ))
        return Matches(total, rows, capped, unfiltered)
    first: list[Hit] = []
    if narrow and narrow != expression:
        first = _relevant(conn, narrow, condition, args, want, None)
        if len(first) == want:
            return Matches(total, first, capped, unfiltered, frozenset(hit["id"] for hit in first))
    rows = _relevant(conn, expression, condition, args, want, None if capped else total)
    return _first_then_rest(Matches(total, rows, capped, unfiltered), first, want)


def _first_then_rest(wider: Matches, first: list[Hit], want: int) -> Matches:
    """`first` (the narrow matches, best first), then the best of the wider ones that are not among them."""
    if not first:
        return wider
    ids = frozenset(hit["id"] for hit in first)
    rest = [hit for hit in wider.rows if hit["id"] not in ids]
    return replace(wider, rows=(first + rest)[:want], first=ids)


def _relevant(conn: sqlite3.Connection, expression: str, condition: str, args: list[object], want: int,
              total: int | None) -> list[Hit]:
    """The best `want` observations matching `expression` and `condition` (`total`: how many do, if known)."""
    candidates = want if not condition else want * 4 + 100
    ranked = (
        f"WITH ranked AS (SELECT rowid AS rid, {_RANK} AS score FROM observations_fts"
        " WHERE observations_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) "
    )
    rows = _hits(conn.execute(
        ranked + _OBSERVATION_SELECT.format(score="score") + " FROM ranked JOIN observations o ON o.id = ranked.rid"
        + (" WHERE " + condition if condition else "") + " ORDER BY score, o.id DESC LIMIT ?",
        (expression, candidates, *args, want),
    ))
    if len(rows) == want or not condition or total == len(rows):
        return rows
    return _hits(conn.execute(
        _OBSERVATION_SELECT.format(score=_RANK) + _FTS_JOIN + " WHERE observations_fts MATCH ? AND " + condition
        + f" ORDER BY {_order_sql('relevance', 'score', 'created_at')} LIMIT ?",
        (expression, *args, want),
    ))


# Where each kind's snippet comes from: its FTS table and column (-1: the best of any column).
_SNIPPET_SOURCES = {"observation": ("observations_fts", 2), "summary": ("summaries_fts", -1), "prompt": ("prompts_fts", 0)}


def add_snippets(conn: sqlite3.Connection, expression: str, items: list[Hit], matches: int | None = None) -> None:
    """Highlighted snippets for the page only (snippet() is costly; never for every match).

    `matches`: how many rows `expression` matches in every kind on the page (filters aside), when
    known. When they are few (`SNIPPETS_IN_ONE_PASS`), one pass over them makes the page's snippets;
    otherwise each page row is looked up by id, which costs the expression's set-up once per row.
    """
    if not expression:
        return
    for kind, (table, column) in _SNIPPET_SOURCES.items():
        ids = [item["id"] for item in items if item["kind"] == kind]
        if not ids:
            continue
        own = own_text(expression)  # a snippet quotes the row's own text, never its neighbours'
        marks = ", ".join("?" for _ in ids)
        make = f"snippet({table}, {column}, '[', ']', '…', 12)"
        if matches is not None and matches <= SNIPPETS_IN_ONE_PASS:
            rows = conn.execute(f"SELECT rowid, CASE WHEN rowid IN ({marks}) THEN {make} END FROM {table}"
                                f" WHERE {table} MATCH ?", (*ids, own)).fetchall()
        else:
            rows = conn.execute(f"SELECT rowid, {make} FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})",
                                (own, *ids)).fetchall()
        found = {row_id: text for row_id, text in rows if text}
        for item in items:
            if item["kind"] == kind and found.get(item["id"]):
                item["snippet"] = found[item["id"]]


def known_authors(conn: sqlite3.Connection, cap: int = 200) -> list[str]:
    """The distinct authors of observations (team memory), up to `cap`: one index seek each (m017)."""
    return [row[0] for row in conn.execute(
        "WITH RECURSIVE named(author, n) AS (SELECT MIN(author), 1 FROM observations WHERE author IS NOT NULL"
        " UNION ALL SELECT (SELECT MIN(author) FROM observations WHERE author > named.author), n + 1 FROM named"
        " WHERE named.author IS NOT NULL AND n < ?) SELECT author FROM named WHERE author IS NOT NULL", (cap,))]


def newest_time(conn: sqlite3.Connection, project: str | None) -> str | None:
    """When the newest observation of `project` (None: of any, read among the last thousand stored) was made."""
    if project:
        row = conn.execute("SELECT MAX(created_at) FROM observations WHERE project = ?", (project,)).fetchone()
    else:
        row = conn.execute("SELECT MAX(created_at) FROM (SELECT created_at FROM observations ORDER BY id DESC"
                           " LIMIT 1000)").fetchone()
    return str(row[0]) if row and row[0] else None


def prior_fields(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """id → (author, type, created_at, files read, files modified) of these observations, the fields a
    search's priors weigh (the lists as stored: JSON text)."""
    found: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in conn.execute("SELECT id, author, type, created_at, files_read, files_modified"
                                f" FROM observations WHERE id IN ({', '.join('?' for _ in chunk)})", chunk):
            found[int(row[0])] = tuple(row[1:])
    return found


# -- summaries and prompts ----------------------------------------------------------------------------


def _scope(where: list[str], args: list[object], filters: SearchFilters, project: str, created: str) -> None:
    """Add the project and date-range filters on the given columns."""
    for column, op, value in ((project, "=", filters.project), (created, ">=", filters.since),
                              (created, "<", filters.until)):
        if value:
            where.append(f"{column} {op} ?")
            args.append(value)


def _ranked(conn: sqlite3.Connection, select: str, source: str, args: list[object], order: str,
            want: int, narrow: str | None) -> Matches:
    """The first `want` rows of `select` + `source` in `order` (its first argument the MATCH
    expression; `narrow` as in `observation_hits`) and their capped count."""
    total, capped = _count(conn, source, args, want)
    ordering = f" ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?"
    first: list[Hit] = []
    if narrow and narrow != args[0] and order == "relevance":
        first = _hits(conn.execute(select + source + ordering, (narrow, *args[1:], want)))
        if len(first) == want:
            return Matches(total, first, capped, first=frozenset(hit["id"] for hit in first))
    return _first_then_rest(Matches(total, _hits(conn.execute(select + source + ordering, (*args, want))), capped),
                            first, want)


def summary_hits(conn: sqlite3.Connection, expression: str, filters: SearchFilters, order: str,
                 want: int, narrow: str | None = None) -> Matches:
    """The first `want` summaries matching `expression` in `order` and their count; project and dates apply."""
    where: list[str] = ["summaries_fts MATCH ?"]
    args: list[object] = [expression]
    _scope(where, args, filters, "s.project", "s.created_at")
    select = (
        "SELECT 'summary' AS kind, s.id AS id, 'S' || s.id AS ref, s.created_at AS created_at,"
        " s.project AS project, 'summary' AS type, s.request AS title, s.completed AS subtitle,"
        " substr(s.learned, 1, 160) AS snippet,"
        f" bm25(summaries_fts, {SUMMARY_WEIGHTS}) AS score, s.session_id AS session_id"
    )
    source = " FROM summaries_fts JOIN summaries s ON s.id = summaries_fts.rowid WHERE " + " AND ".join(where)
    return _ranked(conn, select, source, args, order, want, narrow)


def prompt_hits(conn: sqlite3.Connection, expression: str, filters: SearchFilters, order: str,
                want: int, narrow: str | None = None) -> Matches:
    """The first `want` non-private prompts matching `expression` in `order` and their count."""
    where: list[str] = ["prompts_fts MATCH ?", "p.private = 0"]
    args: list[object] = [expression]
    _scope(where, args, filters, "ss.project", "p.created_at")
    select = (
        "SELECT 'prompt' AS kind, p.id AS id, 'P' || p.id AS ref, p.created_at AS created_at,"
        " ss.project AS project, 'prompt' AS type, p.text AS title, NULL AS subtitle,"
        f" substr(p.text, 1, 160) AS snippet, bm25(prompts_fts, {PROMPT_WEIGHTS}) AS score,"
        " p.session_id AS session_id"
    )
    source = (" FROM prompts_fts JOIN prompts p ON p.id = prompts_fts.rowid JOIN sessions ss ON ss.id = p.session_id"
              " WHERE " + " AND ".join(where))
    return _ranked(conn, select, source, args, order, want, narrow)


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
