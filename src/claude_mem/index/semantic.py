"""Search by meaning: `semantic` (cosine of MiniLM embeddings) and `hybrid` (that fused with BM25).

Both rank observations; a query that asks for summaries or prompts is answered by keyword search,
which covers every kind. Vectors are read from the store, filtered like any search, and compared to
the query's embedding by brute force: fast enough below ~1M rows. `hybrid` is weighted min-max
fusion over the union of both top-100 lists, `0.4·cosine + 0.6·bm25` (LoCoMo dev: 0.607 R@5 against
RRF's 0.514 and BM25's 0.553, in `reference/retrieval.md`). A hit's `score` is that fused value (or
the cosine), higher is better; its `cosine` is the absolute similarity, what a threshold can be set
on (fused scores are relative to the candidates).
"""

from __future__ import annotations

import sqlite3

from claude_mem.index import embedder, fts
from claude_mem.index.base import SearchResult
from claude_mem.index.keyword import KeywordIndex
from claude_mem.index.query import SearchQuery
from claude_mem.store import search as repository
from claude_mem.store import vectors

CANDIDATES = 100
COSINE_WEIGHT = 0.4
# Below this cosine a semantic hit is noise (unrelated MiniLM pairs sit around 0.0–0.15).
MIN_COSINE = 0.2


def embed_missing(conn: sqlite3.Connection, batch: int = 32) -> int:
    """Embed up to `batch` rows that have no vector of this model; returns how many (0: all done)."""
    rows = vectors.missing(conn, embedder.MODEL, batch)
    if rows:
        matrix = embedder.shared().embed([text for _kind, _id, text in rows])
        vectors.save(conn, embedder.MODEL, [(kind, row_id, matrix[i].tobytes()) for i, (kind, row_id, _text) in enumerate(rows)])
    return len(rows)


def _cosines(conn: sqlite3.Connection, query: SearchQuery) -> list[tuple[int, float]]:
    """(observation id, cosine) of every filtered observation with a vector, best first."""
    import numpy as np

    rows = vectors.observation_vectors(conn, embedder.MODEL, query.filters)
    if not rows or not query.text:
        return []
    matrix = np.frombuffer(b"".join(vector for _id, vector in rows), dtype=np.float32).reshape(len(rows), -1)
    scores = matrix @ embedder.shared().embed([query.text])[0]
    order = np.argsort(-scores, kind="stable")
    return [(int(rows[i][0]), float(scores[i])) for i in order]


def _page(conn: sqlite3.Connection, query: SearchQuery, scored: list[tuple[int, float]], match: str,
          cosines: dict[int, float]) -> SearchResult:
    """The requested page of `scored` (best first), in the query's order; each hit with its `cosine`."""
    hits = repository.observations_by_id(conn, [row_id for row_id, _score in scored])
    items = []
    for row_id, score in scored:
        if row_id in hits:
            items.append({**hits[row_id], "score": round(score, 4), "cosine": round(cosines.get(row_id, 0.0), 4)})
    if query.order != "relevance":
        items.sort(key=lambda hit: (hit["created_at"], hit["id"]), reverse=query.order == "newest")
    return SearchResult(items=items[query.offset:query.offset + query.limit], total=len(items), match=match)


class SemanticIndex:
    """Observations ranked by the cosine of their embedding to the query's."""

    mode = "semantic"

    def search(self, conn: sqlite3.Connection, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        scored = [(row_id, score) for row_id, score in _cosines(conn, query) if score >= MIN_COSINE]
        return _page(conn, query, scored, "", dict(scored))


class HybridIndex:
    """BM25 and cosine, each min-max normalised over its top candidates, fused by weight."""

    mode = "hybrid"

    def search(self, conn: sqlite3.Connection, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        expression = fts.keyword_expression(query.text)
        keyword: dict[int, float] = {}
        if expression:
            _total, hits = repository.observation_hits(conn, expression, query.filters, "relevance", CANDIDATES)
            keyword = {int(hit["id"]): -float(hit["score"]) for hit in hits}  # bm25: lower is better
        cosines = _cosines(conn, query)
        semantic = dict(cosines[:CANDIDATES])
        fused: dict[int, float] = {}
        for weight, scores in ((1 - COSINE_WEIGHT, keyword), (COSINE_WEIGHT, semantic)):
            if not scores:
                continue
            low, high = min(scores.values()), max(scores.values())
            for row_id, score in scores.items():
                fused[row_id] = fused.get(row_id, 0.0) + weight * ((score - low) / (high - low) if high > low else 1.0)
        if not keyword:  # no word of the query matched: keep only what means something close
            fused = {row_id: score for row_id, score in fused.items() if semantic.get(row_id, 0.0) >= MIN_COSINE}
        ranked = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))
        return _page(conn, query, ranked, expression, dict(cosines))
