"""What happened around a moment: observations, summaries and prompts in time order (DESIGN §6).

The anchor is an observation id (`12`, `#12`), a summary (`S3`), a prompt (`P7`), an ISO
date/time, or search words (their best keyword match). The anchor row's project scopes the
timeline unless a project is given.
"""

import re
from typing import TypedDict

from claude_mem.domain import RecallError, UnknownRecord, is_ref, parse_ref, parse_time, ref
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall import freshness
from claude_mem.store import Store
from claude_mem.store import search as repository
from claude_mem.store.search import TimelineRow

MAX_SIDE = 200
_TIMESTAMP = re.compile(r"^\d{4,}-\d{1,2}-\d{1,2}")  # year 99999 is refused as a date, not searched as words


class Anchor(TypedDict):
    """The point a timeline is centred on: a stored row, or (kind `time`, id None) a bare moment."""

    kind: str
    id: int | None
    created_at: str
    project: str | None


class Timeline(TypedDict):
    anchor: Anchor
    project: str | None
    items: list[TimelineRow]


def _anchor_row(conn: Store, kind: str, row_id: int) -> Anchor:
    point = repository.anchor_point(conn, kind, row_id)
    if point is None:
        raise UnknownRecord(f"no {kind} {ref(kind, row_id)}")
    return {"kind": kind, "id": row_id, "created_at": point[0], "project": point[1]}


def resolve_anchor(conn: Store, anchor: str, project: str | None = None) -> Anchor:
    """The anchor for an id, `S<id>`, `P<id>`, a timestamp or search words."""
    text = str(anchor or "").strip()
    if not text:
        raise RecallError("empty anchor (give an id such as 12, S3, a time such as 2026-11-20T14:00, or words)")
    if is_ref(text):
        kind, row_id = parse_ref(text)
        return _anchor_row(conn, kind, row_id)
    if _TIMESTAMP.match(text):
        return {"kind": "time", "id": None, "created_at": parse_time(text), "project": project}
    found = search(conn, SearchQuery.build(text, project=project, limit=1)).items
    if not found:
        raise UnknownRecord(f"nothing matches {text!r}" + (" in this project" if project else ""))
    return _anchor_row(conn, "observation", found[0]["id"])


def timeline(conn: Store, anchor: str, before: int = 5, after: int = 5,
             project: str | None = None) -> Timeline:
    """`{"anchor": {...}, "project": key, "items": [...]}`: `before` rows, the anchor, `after` rows."""
    if not (0 <= before <= MAX_SIDE and 0 <= after <= MAX_SIDE):
        raise RecallError(f"before and after must be 0..{MAX_SIDE}")
    point = resolve_anchor(conn, anchor, project)
    scope = project or point["project"]
    # A row anchor is the first of the rows from it on, so fetch one more of those.
    earlier, later = repository.rows_around(conn, scope, point["created_at"], point["kind"], point["id"], before,
                                            after + (0 if point["kind"] == "time" else 1))
    items = earlier + later
    for item in items:
        item["anchor"] = item["kind"] == point["kind"] and item["id"] == point["id"]
    if point["kind"] != "time":
        # `later` started at the anchor itself; trim to `after` rows past it.
        cut = next((i for i, item in enumerate(items) if item["anchor"]), len(items))
        items = items[: cut + 1 + after]
    freshness.Reader(conn, commits=True).annotate(items)
    return {"anchor": point, "project": scope, "items": items}
