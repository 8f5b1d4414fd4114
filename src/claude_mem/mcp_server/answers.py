"""Recall results as the plain text the MCP tools return: compact rows first, full records on demand.

Every function takes an open connection and raises `RecallError` for input it cannot use; the
server turns that into a tool error. Rows carry ids, dates, types and titles only — the full
text of a memory comes from `observations_text`, for the ids the model picked.
"""

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from claude_mem.domain import ref
from claude_mem.index.base import SearchResult
from claude_mem.index.query import DEFAULT_KINDS, SearchQuery
from claude_mem.recall import by_meaning
from claude_mem.recall.common import RecallError, display_map, resolve_project
from claude_mem.recall.present import record_lines, row_line, total_text, when
from claude_mem.recall.records import fetch
from claude_mem.recall.sanitize import clean
from claude_mem.recall.timeline import timeline
from claude_mem.store import Store
from claude_mem.store.auto_memory import KIND as NOTE_KIND
from claude_mem.store.auto_memory import last_sync
from claude_mem.store.memory import observation_count, store_is_empty

EMPTY_STORE = (
    "claude-mem has no memory stored yet. Observations appear once Claude Code sessions have run with"
    " the persistent-memory plugin and its worker has processed them (`claude-mem status` shows the queue)."
)
_ORDER_WORDS = {"relevance": "best match first", "newest": "newest first", "oldest": "oldest first"}
_REF = re.compile(r"(#|[SsPp])?\d+")
# How a search runs: the page for a query with freshness marked, and a note for the model when it is
# not what was asked (`by_meaning.search` asks the worker; `by_meaning.in_process` does not).
Runner = Callable[[Store, SearchQuery], SearchResult]


def scope(conn: Store, project: str | None, all_projects: bool, here: str) -> str | None:
    """The project key to search: the one asked for, none (all projects), or the server's own."""
    if all_projects:
        if project:
            raise RecallError("give either project or all_projects=true, not both")
        return None
    if project and project.strip():
        return resolve_project(conn, project.strip())
    return here


def _name(names: dict[str, str], key: str | None) -> str:
    if key is None:
        return "all projects"
    return "project " + clean(names.get(key) or os.path.basename(key.rstrip("/")) or key, 80)


def _ids_hint(items: Sequence[Mapping[str, Any]]) -> str:
    """`[12, 9, "S3"]`: the ids as get_observations takes them."""
    refs: list[int | str] = [item["id"] if item["kind"] == "observation" else item["ref"] for item in items]
    return json.dumps(list(dict.fromkeys(refs)))


def _nothing(conn: Store, key: str | None, where: str, query: str | None, total: int,
             offset: int, capped: bool = False) -> str:
    if offset and total:
        return f"No results at offset {offset}: {where} has {total_text(total, capped)} for this search."
    stored = observation_count(conn, key)
    if key is not None and stored == 0:
        others = observation_count(conn)
        return f"No observations stored for {where} yet" + (
            f"; {others} in other projects (search them with all_projects=true)." if others else ".")
    if query is None:
        return f"Nothing in {where} matches these filters ({stored} observations stored)."
    return (f"No match for \"{clean(query, 100)}\" in {where} ({stored} observations stored). Try other or fewer"
            " words, a prefix such as auth*, fewer filters" + (", or all_projects=true." if key else "."))


def search_text(conn: Store, here: str, query: str | None, *, project: str | None = None,
                all_projects: bool = False, types: Sequence[str] = (), kinds: Sequence[str] = DEFAULT_KINDS,
                since: str | None = None, until: str | None = None, file: str | None = None,
                concept: str | None = None, limit: int = 20, offset: int = 0, order: str = "relevance",
                mode: str | None = None, run: Runner = by_meaning.in_process) -> str:
    """Matching rows, one line each, with paging and the next steps."""
    if store_is_empty(conn):
        return EMPTY_STORE
    key = scope(conn, project, all_projects, here)
    names = display_map(conn)
    words = (query or "").strip() or None
    wanted = SearchQuery.build(words, project=key, types=types, kinds=kinds or DEFAULT_KINDS, since=since,
                               until=until, file=file, concept=concept, limit=limit, offset=offset, order=order,
                               mode=mode)
    result = run(conn, wanted)
    note = f"Note: {result.note}" if result.note else None
    items, total, where = result.items, result.total, _name(names, key)
    if not items:
        return "\n".join(filter(None, (note, _nothing(conn, key, where, words, total, offset, result.total_capped))))
    shown_to = offset + len(items)
    what = f"\"{clean(words, 100)}\"" if words else "(no words: filters only)"
    ranking = _ORDER_WORDS[wanted.order]
    lines = [note] if note else []
    lines.append(f"Search {what} in {where}: {offset + 1}-{shown_to} of {total_text(total, result.total_capped)}, {ranking}.")
    lines.extend(row_line(item, names.get(item["project"], item["project"]) if key is None else None)
                 for item in items)
    if shown_to < total or result.total_capped:
        lines.append(f"More: the same search with offset={shown_to}.")
    ours = [item for item in items if item["kind"] != NOTE_KIND]
    if ours:
        first = ours[0]["id"] if ours[0]["kind"] == "observation" else ours[0]["ref"]
        lines.append(f"Full text: get_observations(ids={_ids_hint(ours)}) (only the ones you need);"
                     f" context around one: timeline(anchor={json.dumps(first)}).")
    lines.extend(note_files(conn, [item for item in items if item["kind"] == NOTE_KIND]))
    return "\n".join(lines)


def note_files(conn: Store, notes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the auto memory notes among the hits are (Claude Code's own files: read them with Read)."""
    if not notes:
        return []
    files = []
    for item in notes:
        synced = last_sync(conn, str(item["project"]))
        directory = str(synced["directory"]) if synced else ""
        files.append(os.path.join(directory, str(item["path"])) if directory else str(item["path"]))
    return ["auto-memory rows are Claude Code's own auto memory notes (read-only here); full text with the Read"
            " tool: " + ", ".join(clean(path, 300) for path in dict.fromkeys(files))]


def timeline_text(conn: Store, here: str, anchor: str, before: int = 5, after: int = 5,
                  project: str | None = None, all_projects: bool = False) -> str:
    """Rows around the anchor in time order, the anchor marked with `→`."""
    if store_is_empty(conn):
        return EMPTY_STORE
    text = str(anchor).strip()
    # An id names its own project; words and times are looked up in this project unless told otherwise.
    own_project = _REF.fullmatch(text) and not project and not all_projects
    key = None if own_project else scope(conn, project, all_projects, here)
    result = timeline(conn, text, before, after, key)
    items, point = result["items"], result["anchor"]
    names = display_map(conn)
    where = _name(names, result["project"])
    label = ref(point["kind"], point["id"]) if point["id"] is not None else when(point["created_at"])
    if not items:
        return f"Nothing stored in {where} around {label}."
    lines = [f"Timeline around {label} in {where}, oldest first (→ marks the anchor):"]
    for item in items:
        marker = "→ " if item["anchor"] else "  "
        project_name = names.get(item["project"], item["project"]) if result["project"] is None else None
        lines.append(row_line(item, project_name, marker))
    lines.append(f"Full text: get_observations(ids={_ids_hint(items)}) (only the ones you need).")
    return "\n".join(lines)


def observations_text(conn: Store, ids: Sequence[int | str]) -> str:
    """Full records for the ids (each observation counts one fetch); unknown ids are listed at the end."""
    if store_is_empty(conn):
        return EMPTY_STORE
    records, missing = fetch(conn, [str(value) for value in ids])
    if not records:
        raise RecallError(f"unknown id(s): {', '.join(missing)}; ids come from search or timeline results"
                          " (12 or #12 for an observation, S3 for a summary, P7 for a prompt)")
    names = display_map(conn)
    blocks = ["\n".join(record_lines(record, names.get(record.get("project") or "", record.get("project") or "?")))
              for record in records]
    if missing:
        blocks.append(f"Not found: {', '.join(missing)}.")
    return "\n\n".join(blocks)
