"""What every search index is: `SearchQuery` in, `SearchResult` (ranked hits and a total) out."""

from dataclasses import dataclass
from typing import Protocol

from claude_mem.index.query import SearchQuery
from claude_mem.store import Store
from claude_mem.store.search import Hit


@dataclass(frozen=True)
class SearchResult:
    """One page of ranked hits, the number of matches in all, and the FTS5 expression used (or "").

    `total` is exact unless `total_capped`: keyword search stops counting at `store.search.TOTAL_CAP`
    matches (or the page's end, if further), and then `total` is a floor ("1,000+").
    """

    items: list[Hit]
    total: int
    match: str = ""
    total_capped: bool = False

    def as_dict(self) -> dict[str, object]:
        """`{"items": [...], "total": n, "total_capped": bool, "match": expression}`: what the HTTP API
        and `--json` print."""
        return {"items": self.items, "total": self.total, "total_capped": self.total_capped, "match": self.match}


class SearchIndex(Protocol):
    """A way to search the store; `index.search` picks one by `SearchQuery.mode`."""

    mode: str

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        """The page of hits `query` asks for (its offset and limit), best first or by date."""
        ...
