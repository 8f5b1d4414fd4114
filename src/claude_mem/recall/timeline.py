"""What happened around a moment: observations, summaries and prompts in time order (DESIGN §6).

The anchor is an observation id (`12`, `#12`), a summary (`S3`), a prompt (`P7`), an ISO
date/time, or a search query (its best match). The anchor row's project scopes the timeline
unless a project is given.
"""

import re
import sqlite3

from claude_mem.recall.common import RecallError, UnknownRecord, parse_ref, parse_time
from claude_mem.recall.search import search

MAX_SIDE = 200
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
_KIND_ORDER = {"observation": 0, "summary": 1, "prompt": 2}
_TABLES = {"observation": "observations", "summary": "summaries"}
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _anchor_row(conn: sqlite3.Connection, kind: str, row_id: int) -> dict:
    if kind == "prompt":
        row = conn.execute(
            "SELECT p.created_at, s.project FROM prompts p JOIN sessions s ON s.id = p.session_id"
            " WHERE p.id = ? AND p.private = 0", (row_id,),
        ).fetchone()
    else:
        row = conn.execute(f"SELECT created_at, project FROM {_TABLES[kind]} WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        prefix = {"observation": "#", "summary": "S", "prompt": "P"}[kind]
        raise UnknownRecord(f"no {kind} {prefix}{row_id}")
    return {"kind": kind, "id": row_id, "created_at": row[0], "project": row[1]}


def resolve_anchor(conn: sqlite3.Connection, anchor: str, project: str | None = None) -> dict:
    """{kind, id, created_at, project} for an id, `S<id>`, `P<id>`, a timestamp or a query."""
    text = str(anchor or "").strip()
    if not text:
        raise RecallError("empty anchor (give an id such as 12, S3, a time such as 2026-11-20T14:00, or words)")
    if re.fullmatch(r"(#|[SsPp])?\d+", text):
        kind, row_id = parse_ref(text)
        return _anchor_row(conn, kind, row_id)
    if _TIMESTAMP.match(text):
        return {"kind": "time", "id": None, "created_at": parse_time(text), "project": project}
    found = search(conn, text, project=project, limit=1)["items"]
    if not found:
        raise UnknownRecord(f"nothing matches {text!r}" + (" in this project" if project else ""))
    return _anchor_row(conn, "observation", found[0]["id"])


def timeline(
    conn: sqlite3.Connection, anchor: str, before: int = 5, after: int = 5, project: str | None = None
) -> dict:
    """`{"anchor": {...}, "items": [...]}`: up to `before` rows before the anchor, the anchor, `after` after."""
    if not (0 <= before <= MAX_SIDE and 0 <= after <= MAX_SIDE):
        raise RecallError(f"before and after must be 0..{MAX_SIDE}")
    point = resolve_anchor(conn, anchor, project)
    scope = project or point["project"]
    key = (point["created_at"], _KIND_ORDER.get(point["kind"], -1), point["id"] or 0)
    where = "(? IS NULL OR project = ?)"
    columns = "kind, id, ref, created_at, project, type, title, subtitle, session_id"
    earlier = conn.execute(
        f"SELECT {columns} FROM ({_UNION}) WHERE {where} AND (created_at, k, id) < (?, ?, ?)"
        " ORDER BY created_at DESC, k DESC, id DESC LIMIT ?",
        (scope, scope, *key, before),
    ).fetchall()
    later = conn.execute(
        f"SELECT {columns} FROM ({_UNION}) WHERE {where} AND (created_at, k, id) >= (?, ?, ?)"
        " ORDER BY created_at, k, id LIMIT ?",
        (scope, scope, *key, after + (0 if point["kind"] == "time" else 1)),
    ).fetchall()
    names = columns.split(", ")
    items = [dict(zip(names, row)) for row in reversed(earlier)] + [dict(zip(names, row)) for row in later]
    for item in items:
        item["anchor"] = item["kind"] == point["kind"] and item["id"] == point["id"]
    if point["kind"] != "time":
        # `later` started at the anchor itself; trim to `after` rows past it.
        cut = next((i for i, item in enumerate(items) if item["anchor"]), len(items))
        items = items[: cut + 1 + after]
    return {"anchor": point, "project": scope, "items": items}
