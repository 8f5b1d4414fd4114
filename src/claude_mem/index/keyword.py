"""Keyword search: FTS5 BM25 over observations, summaries and prompts (DESIGN §6).

Multi-word text is an OR of its terms ranked by BM25; quoted phrases and `prefix*` work; every
user string is escaped (see `fts`). The store ranks and filters each kind; this merges the kinds,
pages the result and adds snippets for the page only.
"""

from claude_mem.index import fts
from claude_mem.index.base import SearchResult
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store
from claude_mem.store import search as repository
from claude_mem.store.search import Hit


def _desc(stamp: str) -> tuple[int, ...]:
    """Sort key putting later timestamps first."""
    return tuple(-ord(char) for char in stamp or "")


class KeywordIndex:
    """FTS5 BM25; without text, a listing by the filters in date order."""

    mode = "keyword"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        expression = None if query.text is None else fts.keyword_expression(query.text)
        if query.text is not None and not expression:
            return SearchResult(items=[], total=0, match="")
        want, filters = query.offset + query.limit, query.filters
        total = 0
        items: list[Hit] = []
        if "observation" in query.kinds:
            total, items = repository.observation_hits(conn, expression, filters, query.order, want)
        if expression and not filters.observations_only:
            for kind, hits in (("summary", repository.summary_hits), ("prompt", repository.prompt_hits)):
                if kind in query.kinds:
                    count, rows = hits(conn, expression, filters, query.order, want)
                    total += count
                    items.extend(rows)
        if query.order == "relevance":
            items.sort(key=lambda item: (item["score"], _desc(item["created_at"])))
        else:
            items.sort(key=lambda item: (item["created_at"], item["id"]), reverse=query.order == "newest")
        page = items[query.offset: query.offset + query.limit]
        repository.add_snippets(conn, expression or "", page)
        return SearchResult(items=page, total=total, match=expression or "")
