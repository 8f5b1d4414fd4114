"""The one entry point for search: `search(conn, query)` runs the index registered for `query.mode`."""

from dataclasses import replace

from claude_mem.domain import RecallError
from claude_mem.index import embedder, notes
from claude_mem.index.base import SearchIndex, SearchResult
from claude_mem.index.keyword import KeywordIndex
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store, context_field, vectors

# One index per mode; the vector ones only where the embedding model can run (the `search` extra).
INDEXES: dict[str, SearchIndex] = {index.mode: index for index in (KeywordIndex(),)}
if embedder.unavailable() is None:
    from claude_mem.index.semantic import HybridIndex, SemanticIndex

    INDEXES.update({index.mode: index for index in (HybridIndex(), SemanticIndex())})


def default_mode(conn: Store) -> str:
    """`hybrid` wherever vectors exist (and the model can embed a query), else `keyword`."""
    if "hybrid" in INDEXES and vectors.any_vector(conn, embedder.MODEL):
        return "hybrid"
    return "keyword"


def available_modes() -> tuple[str, ...]:
    """The search modes that can run here."""
    return tuple(INDEXES)


def search(conn: Store, query: SearchQuery) -> SearchResult:
    """The page of hits for `query`. A search by meaning that cannot run here (no model, or it broke)
    is answered by keyword search with `degraded="keyword"` and a note saying why: never a silent 0.
    Claude Code's auto memory notes (kind `auto-memory`) are ranked by words and merged in (`index.notes`)."""
    if notes.KIND not in query.kinds:
        return _search(conn, query)
    others = tuple(kind for kind in query.kinds if kind != notes.KIND)
    if not notes.wanted(query):
        return _search(conn, replace(query, kinds=others)) if others else SearchResult(items=[], total=0)
    if not others:
        return notes.with_notes(conn, query, None, False)
    found = _search(conn, replace(query, kinds=others, offset=0, limit=query.offset + query.limit))
    return notes.with_notes(conn, query, found, found.mode in ("hybrid", "semantic"))


def _search(conn: Store, query: SearchQuery) -> SearchResult:
    mode = query.mode or default_mode(conn)
    index = INDEXES.get(mode)
    if index is None:
        if mode not in ("semantic", "hybrid"):
            raise RecallError(f"unknown search mode {mode!r}; available: {', '.join(available_modes())}")
        reason = embedder.unavailable() or "no index for it"
        return after_successors(replace(INDEXES["keyword"].search(conn, query), degraded="keyword", note=(
            f"search by meaning is not available here ({reason}); these are keyword matches")), query.order)
    try:
        found = index.search(conn, query)
    except embedder.ModelUnavailable as exc:  # the model broke after it was found: keyword search answers, saying so
        found = replace(INDEXES["keyword"].search(conn, query), mode="keyword", degraded="keyword",
                        note=f"search by meaning is not available ({exc}); these are keyword matches")
    return after_successors(still_indexing(conn, found) if query.text else found, query.order)


def still_indexing(conn: Store, result: SearchResult) -> SearchResult:
    """`result` with a note while rows stored before m017 wait to enter the keyword index (issue 29)."""
    if not context_field.filling(conn):
        return result
    waiting = context_field.waiting(conn)
    note = (f"{waiting:,} older row{'s' if waiting != 1 else ''} not in the keyword index yet (the worker is"
            " indexing them with their neighbours' text, newest first)")
    return replace(result, note=f"{result.note}; {note}" if result.note else note)


def after_successors(result: SearchResult, order: str = "relevance") -> SearchResult:
    """The page ranked by relevance with every superseded observation moved just below its successor when
    both are on it (issue 26: a later fact ranks above the one it replaced); the rest keep their order.
    A page ordered by date stays in date order."""
    if order != "relevance":
        return result
    items = list(result.items)
    moved = True
    for _ in range(len(items) ** 2 + 1):  # one move per pass; bounded however the chains lie
        if not moved:
            break
        moved = False
        place = {(hit["kind"], hit["id"]): index for index, hit in enumerate(items)}
        for index, hit in enumerate(items):
            after = hit.get("superseded_by")
            successor = place.get(("observation", after)) if after is not None else None
            if hit["kind"] == "observation" and successor is not None and successor > index:
                items.insert(successor, items.pop(index))
                moved = True
                break
    return replace(result, items=items) if items != result.items else result
