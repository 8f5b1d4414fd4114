"""The one entry point for search: `search(conn, query)` runs the index registered for `query.mode`."""

from claude_mem.domain import RecallError
from claude_mem.index import embedder
from claude_mem.index.base import SearchIndex, SearchResult
from claude_mem.index.keyword import KeywordIndex
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store, vectors

# One index per mode; the vector ones only where the embedding model can run (the `search` extra).
INDEXES: dict[str, SearchIndex] = {index.mode: index for index in (KeywordIndex(),)}
if embedder.unavailable() is None:
    from claude_mem.index.semantic import HybridIndex, SemanticIndex

    INDEXES.update({index.mode: index for index in (HybridIndex(), SemanticIndex())})


def default_mode(conn: Store) -> str:
    """`hybrid` wherever vectors exist (and the model can embed a query), else `keyword`."""
    if "hybrid" in INDEXES and vectors.progress(conn, embedder.MODEL)["embedded"]:
        return "hybrid"
    return "keyword"


def available_modes() -> tuple[str, ...]:
    """The search modes that can run here."""
    return tuple(INDEXES)


def search(conn: Store, query: SearchQuery) -> SearchResult:
    """The page of hits for `query`; `RecallError` when its mode has no index here."""
    mode = query.mode or default_mode(conn)
    index = INDEXES.get(mode)
    if index is None:
        reason = embedder.unavailable() or "no index for it"
        raise RecallError(f"search mode {mode!r} is not available ({reason}); available: {', '.join(available_modes())}")
    try:
        return index.search(conn, query)
    except embedder.ModelUnavailable as exc:
        if query.mode:  # asked for by name: say why it cannot run
            raise RecallError(f"search mode {mode!r} is not available: {exc}") from None
        return INDEXES["keyword"].search(conn, query)  # the default degrades to keyword search
