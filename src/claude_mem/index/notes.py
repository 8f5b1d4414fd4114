"""Claude Code's auto memory notes in search (issue 30): the kind `auto-memory`, ranked by words only.

The notes are few (a project's memory directory holds tens of files) and have no vectors: they are
ranked by BM25 over name (×4), description (×2) and body, and merged with what the query's mode found
for the other kinds:

- `keyword`: by BM25 score with the other kinds' hits (lower is better, as they are ranked);
- `hybrid` and `semantic`: a note scores `0.6 × its BM25 / the best note's` — what the best keyword-only
  observation scores in hybrid fusion (`semantic.fuse`: 0.6 for BM25, 0.4 for meaning) — so the best
  note sits beside the best word match, and one that also matches by meaning ranks above it.

A page is cut from the merged ranking, so paging stays consistent; filters that describe observations
(type, file, concept, author) leave the notes out, as they do summaries and prompts; dates apply to a
note's modification time.
"""

from dataclasses import replace
from typing import cast

from claude_mem.index import fts
from claude_mem.index.base import SearchResult
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store
from claude_mem.store import auto_memory as repository
from claude_mem.store.search import Hit

KIND = repository.KIND
# What the best keyword match scores in hybrid fusion (1 - semantic.COSINE_WEIGHT; not imported: that module
# loads numpy).
KEYWORD_SHARE = 0.6


def wanted(query: SearchQuery) -> bool:
    """Whether `query` asks for notes and can match them (words, no observation-only filter)."""
    return KIND in query.kinds and query.text is not None and not query.filters.observations_only


def hits(conn: Store, query: SearchQuery, want: int) -> tuple[int, list[Hit]]:
    """(how many notes match, the best `want` of them), each with its BM25 score (lower is better)."""
    expression = fts.keyword_expression(query.text or "")
    if not expression:
        return 0, []
    where = query.filters
    total, rows = repository.note_hits(conn, expression, where.project, where.since, where.until, want,
                                       query.snippets)
    return total, cast(list[Hit], rows)  # the hit keys, and the note's `path`


def _merged(found: list[Hit], notes: list[Hit], order: str, higher_better: bool) -> list[Hit]:
    """`found` (in its order) with `notes` merged in by score, or by date for a page ordered by date."""
    if order != "relevance":
        return sorted(found + notes, key=lambda hit: (hit["created_at"] or "", hit["id"]), reverse=order == "newest")
    if higher_better and notes:
        best = float(notes[0]["score"]) or -1.0
        notes = [{**note, "score": round(KEYWORD_SHARE * float(note["score"]) / best, 4)} for note in notes]
    merged: list[Hit] = []
    rest = list(notes)
    for hit in found:
        while rest and (float(rest[0]["score"]) > float(hit["score"]) if higher_better
                        else float(rest[0]["score"]) < float(hit["score"])):
            merged.append(rest.pop(0))
        merged.append(hit)
    return merged + rest


def with_notes(conn: Store, query: SearchQuery, others: SearchResult | None, higher_better: bool) -> SearchResult:
    """The page of `query` from `others` (the other kinds' hits, ranked from offset 0 to the page's end;
    None when only notes are asked for) and the notes."""
    end = query.offset + query.limit
    total, notes = hits(conn, query, end)
    if others is None:
        page = _merged([], notes, query.order, False)[query.offset:end]
        return SearchResult(items=page, total=total, match=fts.keyword_expression(query.text or ""), mode="keyword")
    page = _merged(list(others.items), notes, query.order, higher_better)[query.offset:end]
    return replace(others, items=page, total=others.total + total)
