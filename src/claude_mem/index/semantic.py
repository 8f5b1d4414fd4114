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

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from claude_mem.index import embedder, fts
from claude_mem.index.base import SearchResult
from claude_mem.index.keyword import KeywordIndex
from claude_mem.index.query import SearchQuery
from claude_mem.store import Store, vectors
from claude_mem.store import search as repository
from claude_mem.store.rows import SearchHit
from claude_mem.store.search import SearchFilters

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

CANDIDATES = 100
COSINE_WEIGHT = 0.4
# Below this cosine a semantic hit is noise (unrelated MiniLM pairs sit around 0.0–0.15).
MIN_COSINE = 0.2


def embed_missing(conn: Store, batch: int = 32) -> int:
    """Embed up to `batch` rows that have no vector of this model; returns how many (0: all done)."""
    rows = vectors.missing(conn, embedder.MODEL, batch)
    if rows:
        matrix = embedder.shared().embed([text for _kind, _id, text in rows])
        vectors.save(conn, embedder.MODEL, [(kind, row_id, matrix[i].tobytes()) for i, (kind, row_id, _text) in enumerate(rows)])
    return len(rows)


class _Vectors:
    """Every observation vector of one database, in memory: ids, project codes and the matrix."""

    def __init__(self, rows: list[tuple[int, str, bytes]], generation: int) -> None:
        import numpy as np

        self.generation = generation
        self.ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        self.codes: dict[str, int] = {}
        self.projects = np.fromiter((self.codes.setdefault(row[1], len(self.codes)) for row in rows),
                                    dtype=np.int32, count=len(rows))
        self.matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), -1) \
            if rows else np.zeros((0, 0), dtype=np.float32)


# Loaded once per database and process, reloaded when its vector generation moves (migration m005):
# reading 10k vectors from SQLite costs more than the rest of a search together.
_LOADED: dict[tuple[str, str], _Vectors] = {}


def _vectors(conn: Store) -> _Vectors:
    key, generation = (vectors.database_file(conn), embedder.MODEL), vectors.generation(conn)
    cached = _LOADED.get(key)
    if cached is None or cached.generation != generation or not key[0]:
        cached = _Vectors(vectors.observation_vectors(conn, embedder.MODEL), generation)
        _LOADED[key] = cached
    return cached


class _Cosines:
    """The cosine of the query to every filtered observation with a vector (ids ascending)."""

    def __init__(self, ids: np.ndarray, scores: np.ndarray) -> None:
        self.ids, self.scores = ids, scores

    def above(self, minimum: float) -> _Cosines:
        keep = self.scores >= minimum
        return _Cosines(self.ids[keep], self.scores[keep])

    def best(self, count: int) -> list[tuple[int, float]]:
        """The `count` best (id, cosine), best first (ties: stored order)."""
        import numpy as np

        if count < len(self.scores):
            positions = np.argpartition(-self.scores, count)[:count]
            positions = positions[np.argsort(-self.scores[positions], kind="stable")]
        else:
            positions = np.argsort(-self.scores, kind="stable")
        return [(int(self.ids[i]), float(self.scores[i])) for i in positions]

    def of(self, wanted: list[int]) -> dict[int, float]:
        """The cosine of each of these ids that has one."""
        import numpy as np

        if not len(self.ids) or not wanted:
            return {}
        positions = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        return {row_id: float(self.scores[position]) for row_id, position in zip(wanted, positions, strict=True)
                if self.ids[position] == row_id}


@lru_cache(maxsize=256)
def _query_vector(text: str, model: str) -> NDArray[np.float32]:
    """The query's embedding (kept: paging through results asks for the same text again)."""
    vector: NDArray[np.float32] = embedder.shared().embed([text])[0]
    return vector


def _cosines(conn: Store, query: SearchQuery) -> _Cosines:
    """The cosines of every observation that passes the query's filters and has a vector."""
    import numpy as np

    loaded = _vectors(conn)
    if not len(loaded.ids) or not query.text:
        return _Cosines(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    filters = query.filters
    keep = np.ones(len(loaded.ids), dtype=bool)
    if filters.project is not None:
        keep &= loaded.projects == loaded.codes.get(filters.project, -1)
    if replace(filters, project=None) != SearchFilters():  # type, dates, file, concept: ask the store
        keep &= np.isin(loaded.ids, np.array(vectors.filtered_observation_ids(conn, filters), dtype=np.int64))
    if keep.all():
        return _Cosines(loaded.ids, loaded.matrix @ _query_vector(query.text, embedder.MODEL))
    rows = np.flatnonzero(keep)
    if not len(rows):
        return _Cosines(loaded.ids[rows], np.zeros(0, dtype=np.float32))
    # all cosines, then the kept ones: `matrix[rows]` would copy the matrix on every query
    return _Cosines(loaded.ids[rows], (loaded.matrix @ _query_vector(query.text, embedder.MODEL))[rows])


def _page(conn: Store, query: SearchQuery, ranked: list[tuple[int, float]], total: int, match: str,
          cosines: _Cosines) -> SearchResult:
    """The requested page of `ranked` (best first, or every match when ordered by date), each hit with its
    `cosine`. Only the rows shown are read, except by date, when every ranked row is."""
    wanted = ranked if query.order != "relevance" else ranked[query.offset:query.offset + query.limit]
    hits = repository.observations_by_id(conn, [row_id for row_id, _score in wanted])
    similar = cosines.of([row_id for row_id, _score in wanted]) if query.order == "relevance" else {}
    items: list[SearchHit] = [{**hits[row_id], "score": round(score, 4), "cosine": round(similar.get(row_id, 0.0), 4)}
                              for row_id, score in wanted if row_id in hits]
    if query.order != "relevance":
        items.sort(key=lambda hit: (hit["created_at"], hit["id"]), reverse=query.order == "newest")
        items = items[query.offset:query.offset + query.limit]
        similar = cosines.of([hit["id"] for hit in items])
        items = [{**hit, "cosine": round(similar.get(hit["id"], 0.0), 4)} for hit in items]
    return SearchResult(items=items, total=total, match=match)


class SemanticIndex:
    """Observations ranked by the cosine of their embedding to the query's."""

    mode = "semantic"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        cosines = _cosines(conn, query).above(MIN_COSINE)
        count = query.offset + query.limit if query.order == "relevance" else len(cosines.ids)
        return _page(conn, query, cosines.best(count), len(cosines.ids), "", cosines)


class HybridIndex:
    """BM25 and cosine, each min-max normalised over its top candidates, fused by weight."""

    mode = "hybrid"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        expression = fts.keyword_expression(query.text)
        keyword: dict[int, float] = {}
        if expression:
            hits = repository.observation_hits(conn, expression, query.filters, "relevance", CANDIDATES).rows
            keyword = {int(hit["id"]): -float(hit["score"]) for hit in hits}  # bm25: lower is better
        cosines = _cosines(conn, query)
        semantic = dict(cosines.best(CANDIDATES))
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
        return _page(conn, query, ranked, len(ranked), expression, cosines)
