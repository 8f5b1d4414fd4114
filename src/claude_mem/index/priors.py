"""Field priors (issue 29): a query that names a value of a field the store holds lifts the rows carrying it.

Generic, driven by the fields an observation has and the values this store holds — never by a list of
a benchmark's words:

- **author** (team memory): a query naming exactly one teammate whose rows this store holds ("what did
  alice decide about the cache?") multiplies that author's rows by `AUTHOR` (naming two says nothing of
  which one);
- **file**: a word shaped like a path or a file name (`auth.py`, `src/cache/`) lifts the rows that read
  or modified a file whose path contains it, by `FILE`;
- **type**: a word naming an observation type ("decisions", "bugs", "refactoring") lifts rows of that
  type, by `TYPE`;
- **time**: a query naming a time (`index.when`: "in March", "last week") lifts the rows stored in that
  window, by `TIME`, and the window's own best matches join the candidates (`window_filters`).

A concept needs no prior: the concepts are a column of the full-text index that BM25 weighs twice.

A prior multiplies a row's relevance (higher is better: a fused score, or minus BM25); rows without the
field keep theirs. Summaries and prompts carry none of these fields and are left as they are. Each
weight was measured on the LoCoMo dev split (tuned on conversations 1-3, checked on 4-5: `bench/README.md`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from claude_mem.domain import iso_from, stored_time
from claude_mem.index import fts
from claude_mem.store import Store
from claude_mem.store import search as repository
from claude_mem.store.search import SearchFilters

AUTHOR = 1.5
FILE = 1.5
TYPE = 1.2
TIME = 1.5
# A window named by calendar dates reaches this many days past its end (LoCoMo dev: 0.81 of the windows hold
# the evidence's day, 0.91 within a week after: what happened is told a few days later).
AFTER_DAYS = 7
# What a prior adds to a row besides multiplying its score: min-max fusion scores its weakest candidate 0.
FLOOR = 0.01

_WORD = re.compile(r"[\w][\w./\\-]*", re.UNICODE)
_FILE_SHAPED = re.compile(r"(?:[\w.-]*[/\\][\w./\\-]+|[\w-]{2,}\.[a-z][a-z0-9]{0,5})$", re.IGNORECASE)
# The words that name each type (not `change`: "what changed" names no type).
_TYPE_WORDS = {
    "bugfix": ("bug", "bugs", "bugfix", "bugfixes"),
    "feature": ("feature", "features"),
    "refactor": ("refactor", "refactors", "refactoring", "refactored", "refactorings"),
    "decision": ("decision", "decisions", "decided"),
    "discovery": ("discovery", "discoveries"),
}
_TYPE_OF_WORD = {word: kind for kind, words in _TYPE_WORDS.items() for word in words}


@dataclass(frozen=True)
class Priors:
    """What a query names: one author, file names, types, a time window (store timestamps)."""

    author: str | None = None
    files: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    when: str = ""  # the words that named the time, for a note

    def __bool__(self) -> bool:
        return bool(self.author or self.files or self.types or self.since or self.until)

    def factor(self, author: object, kind: object, created_at: object, files: list[str]) -> float:
        """The multiplier of a row with these fields."""
        factor = 1.0
        if self.author is not None and isinstance(author, str) and author.casefold() == self.author.casefold():
            factor *= AUTHOR
        if self.files and any(name in path.casefold() for name in self.files for path in files):
            factor *= FILE
        if self.types and kind in self.types:
            factor *= TYPE
        if (self.since or self.until) and isinstance(created_at, str) and \
                (self.since is None or created_at >= self.since) and (self.until is None or created_at < self.until):
            factor *= TIME
        return factor

    def apply(self, conn: Store, scores: dict[int, float]) -> dict[int, float]:
        """`scores` (observation id → relevance, higher better, ≥ 0) with each row's prior applied."""
        if not self or not scores:
            return scores
        fields = repository.prior_fields(conn, list(scores))
        lifted = dict(scores)
        for row_id, (author, kind, created_at, read, modified) in fields.items():
            factor = self.factor(author, kind, created_at, _paths(read) + _paths(modified) if self.files else [])
            if factor != 1.0:  # (a candidate scored 0 by min-max fusion is lifted too, if only a little)
                lifted[row_id] = scores[row_id] * factor + (factor - 1.0) * FLOOR
        return lifted

    def window_filters(self, filters: SearchFilters) -> SearchFilters | None:
        """`filters` narrowed to the query's time window (None without one, or when it misses the filters')."""
        if not (self.since or self.until):
            return None
        since = max(filter(None, (filters.since, self.since)), default=None)
        until = min(filter(None, (filters.until, self.until)), default=None)
        if since is not None and until is not None and since >= until:
            return None
        return replace(filters, since=since, until=until)


def _paths(stored: object) -> list[str]:
    try:
        paths = json.loads(stored) if isinstance(stored, str) else []
    except ValueError:
        return []
    return [path.casefold() for path in paths if isinstance(path, str)] if isinstance(paths, list) else []


def priors(conn: Store, text: str | None, filters: SearchFilters, now: datetime | None = None) -> Priors:
    """The priors `text` names. A field its filters fix already (an author filter, a type filter) adds none."""
    if not text:
        return Priors()
    words = [word.strip("./\\-") for word in _WORD.findall(text[:2000])]
    folded = {word.casefold() for word in words if word}
    author = None
    if filters.author is None and folded:
        named = {name for name in repository.known_authors(conn)
                 if name.casefold() in folded or (name.split() or [""])[0].casefold() in folded}
        author = next(iter(named)) if len(named) == 1 else None
    files = tuple(dict.fromkeys(word.casefold() for word in words if _FILE_SHAPED.match(word)))[:5]
    types = () if filters.types else tuple(dict.fromkeys(_TYPE_OF_WORD[w] for w in folded if w in _TYPE_OF_WORD))
    since, until, phrase = _window(conn, text, filters, now or datetime.now(timezone.utc))
    return Priors(author=author, files=files, types=types, since=since, until=until, when=phrase)


def _window(conn: Store, text: str, filters: SearchFilters, now: datetime) -> tuple[str | None, str | None, str]:
    """(since, until, the words) of the time `text` names: a date without a year is the latest before the
    newest row in scope; "before <event>" ends where the best match of the event was stored."""
    from claude_mem.index import when  # noqa: PLC0415 - the time parser, for a query that has text

    newest = repository.newest_time(conn, filters.project)
    latest = stored_time(newest) if newest else None
    hint = when.time_hint(text, now, latest)
    if hint is None:
        return None, None, ""
    if hint.anchor:
        expression = fts.keyword_expression(hint.anchor)
        found = repository.observation_hits(conn, expression, filters, "relevance", 1).rows if expression else []
        if not found:
            return None, None, ""
        moment = str(found[0]["created_at"])
        return (None, moment, hint.phrase) if hint.relation == "before" else (moment, None, hint.phrase)
    if hint.until and AFTER_DAYS and hint.since:  # an event is often told a few days after it happened
        hint = replace(hint, until=_shifted(hint.until, AFTER_DAYS))
    return hint.since, hint.until, hint.phrase


def _shifted(stamp: str, days: float) -> str:
    moment = stored_time(stamp)
    return stamp if moment is None else iso_from(moment + timedelta(days=days))
