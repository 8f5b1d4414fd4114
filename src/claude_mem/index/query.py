"""`SearchQuery`: one search, validated once (DESIGN §6). Every surface builds one and hands it to
`index.search.search`.

The value sets live here and nowhere else: search modes, record kinds, orders and the page limit.
A bad value is a `RecallError` naming the field and what it accepts; dates are parsed here, once,
into the store's timestamp format.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from claude_mem.domain import OBSERVATION_TYPES, RECORD_KINDS, RecallError, parse_time
from claude_mem.store.search import SearchFilters

# Every search mode a query may name. Whether one can run here is the index registry's business
# (`index.search`), so a known mode without its index is a clear "not available", not "unknown".
MODES = ("hybrid", "keyword", "semantic")
# Claude Code's auto memory notes are searched too (issue 30, `index.notes`), by every surface by default.
KINDS = (*RECORD_KINDS, "auto-memory")
DEFAULT_KINDS = ("observation", "auto-memory")
ORDERS = ("relevance", "newest", "oldest")
MAX_LIMIT = 500
# Past any store's size, and within SQLite's integers.
MAX_OFFSET = 10**12
DEFAULT_LIMIT = 20



def names(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """`"bugfix, decision"` or `["bugfix", "decision"]` → `("bugfix", "decision")`, blanks dropped."""
    parts = (value or "").split(",") if isinstance(value, str) or value is None else value
    return tuple(part.strip() for part in parts if part and part.strip())


def _known(what: str, wanted: tuple[str, ...], known: tuple[str, ...]) -> None:
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise RecallError(f"unknown {what}(s) {', '.join(unknown)} (known: {', '.join(known)})")


def _one_of(what: str, value: str, known: tuple[str, ...]) -> None:
    if value not in known:
        raise RecallError(f"unknown {what} {value!r} (known: {', '.join(known)})")


@dataclass(frozen=True)
class SearchQuery:
    """A validated search: text (None lists by the filters alone), mode, filters, page and order.

    Build it with `SearchQuery.build`; the fields are already checked and normalised (times in the
    store's format, a listing ordered by date and over observations only).
    """

    text: str | None
    mode: str = ""  # "" is the default: hybrid where vectors exist, else keyword (`index.search`)
    filters: SearchFilters = field(default_factory=SearchFilters)
    kinds: tuple[str, ...] = ("observation",)
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    order: str = "relevance"
    # Highlighted snippets of the matched words (keyword search; ~30 µs a row): for surfaces that show them.
    snippets: bool = False
    # A search by meaning first embeds the rows it covers that still wait for a vector (`semantic.ON_DEMAND`,
    # ~0.3 s at most); the per-prompt memory, on a 100 ms budget, turns it off and counts them instead.
    embed_waiting: bool = True

    @classmethod
    def build(
        cls,
        text: str | None,
        *,
        mode: str | None = None,
        project: str | None = None,
        types: str | Iterable[str] | None = (),
        since: str | None = None,
        until: str | None = None,
        file: str | None = None,
        concept: str | None = None,
        author: str | None = None,
        kinds: str | Iterable[str] | None = ("observation",),
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        order: str | None = None,
        snippets: bool = False,
    ) -> "SearchQuery":
        """The query for these inputs, or `RecallError` naming the first bad one.

        `types` and `kinds` take a list or a comma-separated string. `since`/`until` take what
        `parse_time` does (a bare `until` date includes that day). `project` is a project key
        (surfaces resolve display names and paths first). Type, file, concept and author (team
        memory: rows pulled from that teammate) filters apply to observations only. Without text
        nothing is ranked: `relevance` becomes `newest` and only observations are listed. Kind
        `auto-memory` is Claude Code's own notes (`DEFAULT_KINDS`: observations and those).
        """
        mode = mode or ""
        order = order or "relevance"
        wanted_types, wanted_kinds = names(types), tuple(dict.fromkeys(names(kinds)))
        if mode:
            _one_of("search mode", mode, MODES)
        _known("type", wanted_types, OBSERVATION_TYPES)
        if not wanted_kinds:
            raise RecallError(f"unknown kind(s) (none) (known: {', '.join(KINDS)})")
        _known("kind", wanted_kinds, KINDS)
        _one_of("order", order, ORDERS)
        if not 0 < limit <= MAX_LIMIT:
            raise RecallError(f"limit must be 1..{MAX_LIMIT}, not {limit}")
        if not 0 <= offset <= MAX_OFFSET:
            raise RecallError(f"offset must be 0..{MAX_OFFSET}, not {offset}")
        filters = SearchFilters(
            project=project or None, types=wanted_types, file=file or None, concept=concept or None,
            author=author or None,
            since=_time("since", since), until=_time("until", until, end_of_day=True),
        )
        if text is None:
            order = "newest" if order == "relevance" else order
            wanted_kinds = ("observation",)
        return cls(text=text, mode=mode, filters=filters, kinds=wanted_kinds, limit=limit, offset=offset,
                   order=order, snippets=snippets)


def _time(name: str, value: str | None, end_of_day: bool = False) -> str | None:
    if not value:
        return None
    try:
        return parse_time(value, end_of_day=end_of_day)
    except RecallError as exc:
        raise RecallError(f"{name}: {exc}") from None
