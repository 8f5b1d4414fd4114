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
    mode: str = ""  # what ran: "keyword", "semantic" or "hybrid" ("" where it does not matter)
    degraded: str = ""  # "keyword" when meaning was asked for and keyword search answered
    unembedded: int = 0  # rows the search covers that have no vector yet (not compared by meaning)
    note: str = ""  # one line for a person: why it is degraded, what was not compared

    def as_dict(self) -> dict[str, object]:
        """`{"items": [...], "total": n, "total_capped": bool, "match": expression}`, plus `mode`,
        `degraded`, `unembedded` and `note` when set: what the HTTP API and `--json` print."""
        extra = {"mode": self.mode, "degraded": self.degraded, "unembedded": self.unembedded, "note": self.note}
        return {"items": self.items, "total": self.total, "total_capped": self.total_capped, "match": self.match,
                **{name: value for name, value in extra.items() if value}}


class SearchIndex(Protocol):
    """A way to search the store; `index.search` picks one by `SearchQuery.mode`."""

    mode: str

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        """The page of hits `query` asks for (its offset and limit), best first or by date."""
        ...
