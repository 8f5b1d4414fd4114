"""How recall results read as text, shared by the CLI and the MCP server.

Rows are one line each (`#12 2026-11-20 14:30 bugfix Title`); full records list their fields
in a fixed order. Everything stored passes through `sanitize.clean`, so text that reaches a
model stays data: single-line fields, no markup that could pose as system or hook text.
"""

from collections.abc import Mapping
from typing import Any

from claude_mem.domain import ref
from claude_mem.recall import freshness
from claude_mem.recall.context import local_time
from claude_mem.recall.sanitize import clean
from claude_mem.store.rows import OBSERVATION_CONTENT, SUMMARY_CONTENT

# An observation's type is in the record's first line, so not among its fields.
RECORD_FIELDS = {
    "observation": (*(name for name in OBSERVATION_CONTENT if name != "type"), "fetch_count"),
    "summary": SUMMARY_CONTENT,
    "prompt": ("text", "prompt_number", "content_session_id"),
}
TITLE_CHARS = 110
FIELD_CHARS = 4000
ITEM_CHARS = 300


def when(stamp: str | None) -> str:
    """A stored UTC timestamp as local `YYYY-MM-DD HH:MM` (the raw text if it does not parse)."""
    moment = local_time(stamp or "")
    return moment.strftime("%Y-%m-%d %H:%M") if moment else str(stamp or "")


def total_text(total: int, capped: bool = False) -> str:
    """A search's count of matches: `42`, or `1000+` when counting stopped there (`SearchResult.total_capped`)."""
    return f"{total}+" if capped else str(total)


def supersession(item: Mapping[str, Any]) -> str:
    """`superseded by #N` (and `supersedes #M`) for an observation a later fact replaced (issue 26); ""."""
    parts = []
    if isinstance(item.get("superseded_by"), int):
        parts.append(f"superseded by #{item['superseded_by']}")
    older = item.get("supersedes")
    if isinstance(older, list) and older:
        parts.append("supersedes " + ", ".join(f"#{int(i)}" for i in older[:10]))
    return "; ".join(parts)


def row_line(item: Mapping[str, Any], project_name: str | None = None, marker: str = "") -> str:
    """One compact line for a search or timeline row; `project_name` adds a `[name]` column."""
    parts = [marker + item["ref"], when(item["created_at"]), clean(item.get("type"), 12)]
    if project_name is not None:
        parts.append(f"[{clean(project_name, 60)}]")
    parts.append((clean(item.get("title"), TITLE_CHARS) or "(untitled)") + freshness.marker(item))
    if note := supersession(item):
        parts.append(f"({note})")
    return " ".join(part for part in parts if part)


def record_lines(item: Mapping[str, Any], project_name: str) -> list[str]:
    """A full observation, summary or prompt (as `records.fetch` returns it) as text lines."""
    kind = item["kind"]
    head = f"{ref(kind, item['id'])} {clean(item.get('type', kind), 12)} · {when(item['created_at'])} · " \
           f"project {clean(project_name, 80)}"
    lines = [head]
    state = freshness_line(item)
    if state:
        lines.append(state)
    if note := supersession(item):
        lines.append(note)
    for name in RECORD_FIELDS[kind]:
        value = item.get(name)
        if value in (None, "", []):
            continue
        label = name.replace("_", " ")
        if isinstance(value, list):
            lines.append(f"{label}:")
            lines.extend(f"  - {clean(entry, ITEM_CHARS)}" for entry in value)
        else:
            lines.append(f"{label}: {clean(value, FIELD_CHARS)}")
    return lines


def freshness_line(item: Mapping[str, Any]) -> str:
    """`freshness: changed — a.py (since 1a2b3c4)` for an observation whose files changed or went; "" otherwise."""
    state = item.get("freshness")
    if state not in freshness.STALE:
        return ""
    commits = item.get("changed_commits") or {}
    files = [clean(path, 200) + (f" (since: {', '.join(clean(c, 12) for c in commits[path][:5])})"
                                 if commits.get(path) else "") for path in item.get("changed_files") or []]
    return f"freshness: {state} — {', '.join(files[:10])}" if files else f"freshness: {state}"
