"""Keyword search: FTS5 BM25 over observations, summaries and prompts (DESIGN §6).

Multi-word text is an OR of its terms ranked by BM25, tried first as the AND of them (when rows
holding every word fill the page, the rest are counted, not ranked); quoted phrases and `prefix*`
work; every user string is escaped (see `fts`). The store ranks and filters each kind; this merges
the kinds, pages the result and, when asked, highlights snippets for the page only (otherwise a hit's snippet is
the start of its text).
"""

from claude_mem.index import fts, priors
from claude_mem.index.base import SearchResult
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store
from claude_mem.store import search as repository
from claude_mem.store.search import Hit

# Ranked when a query names a field value (`priors`): enough for a lifted row to reach the first page.
PRIOR_CANDIDATES = 100


class KeywordIndex:
    """FTS5 BM25; without text, a listing by the filters in date order."""

    mode = "keyword"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        expression = None if query.text is None else fts.keyword_expression(query.text)
        if query.text is not None and not expression:
            return SearchResult(items=[], total=0, match="", mode="keyword")
        narrow = fts.all_terms_expression(query.text or "") or None
        want, filters = query.offset + query.limit, query.filters
        total, capped, unfiltered = 0, False, None
        items: list[Hit] = []
        first: set[tuple[str, int]] = set()  # rows holding every word: ranked before the rest
        if "observation" in query.kinds:
            named = priors.priors(conn, query.text, filters) if expression and query.order == "relevance" else None
            fetch = max(want, PRIOR_CANDIDATES) if named else want  # a prior may lift a row from past the page
            found = repository.observation_hits(conn, expression, filters, query.order, fetch, narrow)
            total, capped, items, unfiltered = found.total, found.capped, found.rows, found.unfiltered
            window = named.window_filters(filters) if named else None
            if named and window is not None:  # the best of the time the query names join the candidates
                seen = {hit["id"] for hit in items}
                items = items + [hit for hit in repository.observation_hits(
                    conn, expression, window, query.order, fetch, narrow).rows if hit["id"] not in seen]
            if named:
                lifted = named.apply(conn, {hit["id"]: -float(hit["score"]) for hit in items})
                items = [{**hit, "score": -lifted[hit["id"]]} for hit in items]
            first.update(("observation", row_id) for row_id in found.first)
        if expression and not filters.observations_only:
            for kind, hits in (("summary", repository.summary_hits), ("prompt", repository.prompt_hits)):
                if kind in query.kinds:
                    found = hits(conn, expression, filters, query.order, want, narrow)
                    total, capped, unfiltered = total + found.total, capped or found.capped, None
                    items.extend(found.rows)
                    first.update((kind, row_id) for row_id in found.first)
        if query.order == "relevance":  # every word before some, then best first, then newest (stable sorts)
            items.sort(key=lambda item: item["created_at"] or "", reverse=True)
            items.sort(key=lambda item: ((item["kind"], item["id"]) not in first, item["score"]))
        else:
            items.sort(key=lambda item: (item["created_at"], item["id"]), reverse=query.order == "newest")
        page = items[query.offset: query.offset + query.limit]
        if query.snippets:
            repository.add_snippets(conn, expression or "", page, unfiltered)
        return SearchResult(items=page, total=total, match=expression or "", total_capped=capped, mode="keyword")
