"""The one entry point for search: `search(conn, query)` runs the index registered for `query.mode`."""

import sqlite3

from claude_mem.domain import RecallError
from claude_mem.index.base import SearchIndex, SearchResult
from claude_mem.index.keyword import KeywordIndex
from claude_mem.index.query import SearchQuery

# One index per mode; a vector index registers beside the keyword one.
INDEXES: dict[str, SearchIndex] = {index.mode: index for index in (KeywordIndex(),)}


def available_modes() -> tuple[str, ...]:
    """The search modes that can run here."""
    return tuple(INDEXES)


def search(conn: sqlite3.Connection, query: SearchQuery) -> SearchResult:
    """The page of hits for `query`; `RecallError` when its mode has no index here."""
    index = INDEXES.get(query.mode)
    if index is None:
        raise RecallError(f"search mode {query.mode!r} is not available (available: {', '.join(available_modes())})")
    return index.search(conn, query)
