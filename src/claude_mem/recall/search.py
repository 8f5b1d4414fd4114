"""Full-text search (DESIGN §6): FTS5 BM25 over observations, summaries and prompts.

Multi-word queries are an OR of their terms ranked by BM25; quoted phrases and `prefix*` work;
every user string is escaped (see `fts`). Filters: project, type, date range, file, concept.
Results page with limit/offset and report the total; order by relevance, newest or oldest.
"""

import sqlite3
from collections.abc import Iterable

from claude_mem.index import fts
from claude_mem.recall.common import RecallError, parse_time
from claude_mem.domain import OBSERVATION_TYPES

KINDS = ("observation", "summary", "prompt")
ORDERS = ("relevance", "newest", "oldest")
MAX_LIMIT = 500
# Title and subtitle outweigh the narrative; a hit in the title is what a user means.
OBSERVATION_WEIGHTS = "8.0, 4.0, 1.0, 1.0, 2.0"
SUMMARY_WEIGHTS = "4.0, 1.0, 2.0, 2.0, 1.0, 1.0"


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _order_sql(order: str, score: str, created: str) -> str:
    if order == "newest":
        return f"{created} DESC, id DESC"
    if order == "oldest":
        return f"{created} ASC, id ASC"
    return f"{score} ASC, {created} DESC"


def _observation_filters(filters: dict) -> tuple[list[str], list]:
    """SQL conditions on `o` (observations) for every filter except the text match."""
    where, args = [], []
    if filters.get("project"):
        where.append("o.project = ?")
        args.append(filters["project"])
    if filters.get("types"):
        where.append(f"o.type IN ({', '.join('?' for _ in filters['types'])})")
        args.extend(filters["types"])
    if filters.get("since"):
        where.append("o.created_at >= ?")
        args.append(filters["since"])
    if filters.get("until"):
        where.append("o.created_at < ?")
        args.append(filters["until"])
    if filters.get("file"):
        where.append(
            "(EXISTS (SELECT 1 FROM json_each(o.files_read) WHERE value LIKE ? ESCAPE '\\')"
            " OR EXISTS (SELECT 1 FROM json_each(o.files_modified) WHERE value LIKE ? ESCAPE '\\'))"
        )
        pattern = f"%{_escape_like(filters['file'])}%"
        args.extend([pattern, pattern])
    if filters.get("concept"):
        where.append("EXISTS (SELECT 1 FROM json_each(o.concepts) WHERE lower(value) = lower(?))")
        args.append(filters["concept"])
    return where, args


_OBSERVATION_SELECT = (
    "SELECT 'observation' AS kind, o.id AS id, '#' || o.id AS ref, o.created_at AS created_at,"
    " o.project AS project, o.type AS type, o.title AS title, o.subtitle AS subtitle,"
    " substr(o.narrative, 1, 160) AS snippet, {score} AS score, o.session_id AS session_id"
)
_RANK = f"bm25(observations_fts, {OBSERVATION_WEIGHTS})"
_FTS_JOIN = " FROM observations_fts CROSS JOIN observations o ON o.id = observations_fts.rowid"


def _only_project(conn: sqlite3.Connection, project: str) -> bool:
    """True when every observation belongs to `project` (two index lookups), so the filter is moot."""
    low, high = conn.execute(
        "SELECT (SELECT MIN(project) FROM observations), (SELECT MAX(project) FROM observations)"
    ).fetchone()
    return low == high == project


def _observation_hits(conn: sqlite3.Connection, expression: str | None, filters: dict, order: str,
                      want: int) -> tuple[int, list[dict]]:
    """(total, the first `want` observations in `order`).

    Relevance ranking reads the FTS index alone whenever it can: ranking its top candidates and
    filtering those is exact as long as enough candidates survive the filters (otherwise the
    full join runs), and it avoids a table lookup for every one of thousands of matches.
    """
    if expression and filters.get("project") and _only_project(conn, filters["project"]):
        filters = {**filters, "project": None}
    where, args = _observation_filters(filters)
    condition = " AND ".join(where)
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
    select = _OBSERVATION_SELECT.format(score="score" if expression else "0.0")
    if expression and order == "relevance":
        candidates = want if not where else want * 4 + 100
        ranked = (
            f"WITH ranked AS (SELECT rowid AS rid, {_RANK} AS score FROM observations_fts"
            " WHERE observations_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) "
        )
        rows = _dicts(conn.execute(
            ranked + select + " FROM ranked JOIN observations o ON o.id = ranked.rid"
            + (" WHERE " + condition if where else "") + " ORDER BY score, o.id DESC LIMIT ?",
            (expression, candidates, *args, want),
        ))
        if len(rows) == want or not where or total == len(rows):
            return total, rows
    select = _OBSERVATION_SELECT.format(score=score)
    rows = _dicts(conn.execute(
        select + source + full_where + f" ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?",
        (*full_args, want),
    ))
    return total, rows


def _dicts(cursor: sqlite3.Cursor) -> list[dict]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def _add_snippets(conn: sqlite3.Connection, expression: str, items: list[dict]) -> None:
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


def _scope(where: list[str], args: list, filters: dict, project: str, created: str) -> None:
    """Add the project and date-range filters on the given columns."""
    for column, op, key in ((project, "=", "project"), (created, ">=", "since"), (created, "<", "until")):
        if filters.get(key):
            where.append(f"{column} {op} ?")
            args.append(filters[key])


def _summary_query(expression: str, filters: dict) -> tuple[str, str, list]:
    where, args = ["summaries_fts MATCH ?"], [expression]
    _scope(where, args, filters, "s.project", "s.created_at")
    select = (
        "SELECT 'summary' AS kind, s.id AS id, 'S' || s.id AS ref, s.created_at AS created_at,"
        " s.project AS project, 'summary' AS type, s.request AS title, s.completed AS subtitle,"
        " snippet(summaries_fts, -1, '[', ']', '…', 12) AS snippet,"
        f" bm25(summaries_fts, {SUMMARY_WEIGHTS}) AS score, s.session_id AS session_id"
    )
    return select, " FROM summaries_fts JOIN summaries s ON s.id = summaries_fts.rowid WHERE " + " AND ".join(where), args


def _prompt_query(expression: str, filters: dict) -> tuple[str, str, list]:
    where, args = ["prompts_fts MATCH ?", "p.private = 0"], [expression]
    _scope(where, args, filters, "ss.project", "p.created_at")
    select = (
        "SELECT 'prompt' AS kind, p.id AS id, 'P' || p.id AS ref, p.created_at AS created_at,"
        " ss.project AS project, 'prompt' AS type, p.text AS title, NULL AS subtitle,"
        " snippet(prompts_fts, 0, '[', ']', '…', 12) AS snippet, bm25(prompts_fts) AS score,"
        " p.session_id AS session_id"
    )
    source = " FROM prompts_fts JOIN prompts p ON p.id = prompts_fts.rowid JOIN sessions ss ON ss.id = p.session_id"
    return select, source + " WHERE " + " AND ".join(where), args


def _validate(types: Iterable[str], kinds: Iterable[str], order: str, limit: int, offset: int) -> None:
    unknown = sorted(set(types) - set(OBSERVATION_TYPES))
    if unknown:
        raise RecallError(f"unknown type(s) {', '.join(unknown)} (known: {', '.join(OBSERVATION_TYPES)})")
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise RecallError(f"unknown kind(s) {', '.join(unknown) or '(none)'} (known: {', '.join(KINDS)})")
    if order not in ORDERS:
        raise RecallError(f"unknown order {order!r} (known: {', '.join(ORDERS)})")
    if not 0 < limit <= MAX_LIMIT or offset < 0:
        raise RecallError(f"limit must be 1..{MAX_LIMIT} and offset ≥ 0")


def search(
    conn: sqlite3.Connection,
    query: str | None,
    *,
    project: str | None = None,
    types: Iterable[str] = (),
    since: str | None = None,
    until: str | None = None,
    file: str | None = None,
    concept: str | None = None,
    kinds: Iterable[str] = ("observation",),
    limit: int = 20,
    offset: int = 0,
    order: str = "relevance",
) -> dict:
    """`{"items": [...], "total": n, "match": expression}`; `query=None` lists by the filters alone.

    `since`/`until` accept whatever `parse_time` does. Type, file and concept filters apply to
    observations only, so summaries and prompts drop out when one of them is set.
    """
    types, kinds = tuple(types), tuple(dict.fromkeys(kinds))
    _validate(types, kinds, order, limit, offset)
    filters = {
        "project": project, "types": types, "file": file, "concept": concept,
        "since": parse_time(since) if since else None,
        "until": parse_time(until, end_of_day=True) if until else None,
    }
    expression = None if query is None else fts.match_expression(query)
    if query is not None and not expression:
        return {"items": [], "total": 0, "match": ""}
    if expression is None:
        order = "newest" if order == "relevance" else order
        kinds = ("observation",)
    total, items = 0, []
    if "observation" in kinds:
        total, items = _observation_hits(conn, expression, filters, order, offset + limit)
    extra = [(_summary_query, "summary"), (_prompt_query, "prompt")]
    for build, kind in extra if expression and not (types or file or concept) else []:
        if kind not in kinds:
            continue
        select, source, args = build(expression, filters)
        total += conn.execute("SELECT COUNT(*)" + source, args).fetchone()[0]
        items.extend(_dicts(conn.execute(
            f"{select}{source} ORDER BY {_order_sql(order, 'score', 'created_at')} LIMIT ?", (*args, offset + limit)
        )))
    if order == "relevance":
        items.sort(key=lambda item: (item["score"], _desc(item["created_at"])))
    else:
        items.sort(key=lambda item: (item["created_at"], item["id"]), reverse=order == "newest")
    page = items[offset: offset + limit]
    _add_snippets(conn, expression or "", page)
    return {"items": page, "total": total, "match": expression or ""}


def _desc(stamp: str) -> tuple:
    """Sort key putting later timestamps first."""
    return tuple(-ord(char) for char in stamp or "")
