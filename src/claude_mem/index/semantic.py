"""Search by meaning: `semantic` (cosine of MiniLM embeddings) and `hybrid` (that fused with BM25).

Both rank observations; a query that asks for summaries or prompts is answered by keyword search,
which covers every kind. The vectors are held by `vector_index` (exact search, or an HNSW graph in the
worker). Before ranking, the observations the query covers that still wait for a vector are embedded on
the spot (up to `ON_DEMAND`, kept in this process, never written: the backfill stores them); any beyond
that are counted in the answer's `unembedded`, with a note — a search by meaning is never silently
blind to new rows. `hybrid` is weighted min-max
fusion over the union of both top-100 lists, `0.4·cosine + 0.6·bm25` (LoCoMo dev: 0.607 R@5 against
RRF's 0.514 and BM25's 0.553, in `reference/retrieval.md`). A hit's `score` is that fused value (or
the cosine), higher is better; its `cosine` is the absolute similarity, what a threshold can be set
on (fused scores are relative to the candidates).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import TYPE_CHECKING

from claude_mem.index import embedder, fts, priors, vector_index
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
# A search by meaning embeds at most this many of its rows that wait for a vector (~0.3 s on one thread).
ON_DEMAND = 32
LEGACY_BATCH = 5_000


def store_vectors(conn: Store, keys: list[tuple[str, int]], matrix: NDArray[np.float32]) -> None:
    """Quantise `matrix` (unit float32 rows) and store each row as the vector of its (kind, row id)."""
    _scales, quantized = vector_index.quantize(matrix)
    vectors.save(conn, embedder.MODEL, [(kind, row_id, quantized[i].tobytes())
                                        for i, (kind, row_id) in enumerate(keys)])


def _embed(conn: Store, rows: list[tuple[str, int, str]]) -> int:
    if rows:
        store_vectors(conn, [(kind, row_id) for kind, row_id, _text in rows],
                      embedder.shared().embed([text for _kind, _id, text in rows]))
    return len(rows)


def embed_missing(conn: Store, batch: int = 32) -> int:
    """Embed up to `batch` queued rows (observations first, newest first); returns how many (0: all done)."""
    return _embed(conn, vectors.queued(conn, batch))


def convert_legacy(conn: Store, batch: int = LEGACY_BATCH) -> int:
    """Convert up to `batch` float32 vectors of m003 to int8 (those of another model are queued to embed
    again); returns how many were handled (0: none left)."""
    import numpy as np

    rows = vectors.legacy(conn, batch)
    if not rows:
        return 0
    ours = [row for row in rows if row[2] == embedder.MODEL and len(row[3]) == 4 * embedder.DIMENSIONS]
    others = [(kind, row_id) for kind, row_id, model, vector in rows
              if model != embedder.MODEL or len(vector) != 4 * embedder.DIMENSIONS]
    stored: list[tuple[str, int, bytes]] = []
    if ours:
        matrix = np.frombuffer(b"".join(row[3] for row in ours), dtype=np.float32).reshape(len(ours), -1)
        _scales, quantized = vector_index.quantize(matrix)
        stored = [(kind, row_id, quantized[i].tobytes()) for i, (kind, row_id, _m, _v) in enumerate(ours)]
    vectors.converted(conn, embedder.MODEL, stored, others)
    if not vectors.legacy_count(conn, cap=1):  # the last batch: the float32 table is gone, its pages free
        vectors.reclaim(conn)
    return len(rows)


# Vectors a search embedded for rows that wait for one, kept in this process: (observation id, hash of its
# text) → int8 vector. A search never writes (the worker answers from read-only connections; a data dir may
# be read-only): the worker's backfill stores them, as it does every row.
_FRESH: OrderedDict[tuple[int, int], NDArray[np.int8]] = OrderedDict()
_FRESH_LOCK = threading.Lock()
FRESH_KEPT = 4096


def embed_for_query(conn: Store, filters: SearchFilters) -> tuple[dict[int, NDArray[np.int8]], int]:
    """The int8 vectors of the newest of the query's observations that wait for one (up to `ON_DEMAND`,
    embedded here unless an earlier search did), and how many more wait (not compared by meaning)."""
    waiting = vectors.queued_observations(conn, filters, ON_DEMAND + 1)
    if not waiting:
        return {}, 0
    chosen = [(row_id, hash(text), text) for _kind, row_id, text in waiting[:ON_DEMAND]]
    with _FRESH_LOCK:
        todo = [(row_id, digest, text) for row_id, digest, text in chosen if (row_id, digest) not in _FRESH]
    if todo:
        _scales, quantized = vector_index.quantize(embedder.shared().embed([text for _id, _digest, text in todo]))
        with _FRESH_LOCK:
            for (row_id, digest, _text), vector in zip(todo, quantized, strict=True):
                _FRESH[(row_id, digest)] = vector
            while len(_FRESH) > FRESH_KEPT:
                _FRESH.popitem(last=False)
    with _FRESH_LOCK:
        fresh = {row_id: _FRESH[(row_id, digest)] for row_id, digest, _text in chosen if (row_id, digest) in _FRESH}
    more = 0 if len(waiting) <= ON_DEMAND else max(vectors.queued_count(conn, filters) - len(fresh), 0)
    return fresh, more


class _Meaning:
    """What a search by meaning compares: the index, the rows embedded for this search, the query's vector."""

    def __init__(self, index: vector_index.VectorIndex, fresh: dict[int, NDArray[np.int8]],
                 vector: NDArray[np.float32], waiting: int) -> None:
        self.index, self.fresh, self.vector, self.waiting = index, fresh, vector, waiting

    def nearest(self, conn: Store, filters: SearchFilters, count: int) -> list[tuple[int, float]]:
        """The index's closest rows and the fresh ones (which passed the filters when chosen), best first."""
        import numpy as np

        found = dict(self.index.nearest(conn, self.vector, filters, count))
        if self.fresh:
            ids = list(self.fresh)
            _scale, query = vector_index.quantize(self.vector[None, :])
            scores = vector_index.exact_cosines(np.stack([self.fresh[row_id] for row_id in ids]), query[0])
            for row_id, score in zip(ids, scores, strict=True):
                found.setdefault(row_id, float(score))  # the index's own, if the backfill stored it meanwhile
        return sorted(found.items(), key=lambda item: (-item[1], -item[0]))[:count]

    def cosines(self, conn: Store, row_ids: list[int]) -> dict[int, float]:
        return self.index.cosines(conn, self.vector, row_ids)


@lru_cache(maxsize=256)
def _query_vector(text: str, model: str) -> NDArray[np.float32]:
    """The query's embedding (kept: paging through results asks for the same text again)."""
    vector: NDArray[np.float32] = embedder.shared().embed([text])[0]
    return vector


_embedding_thread: ThreadPoolExecutor | None = None


def _embedding_started(text: str) -> Future[NDArray[np.float32]]:
    """The query's embedding, computed on a thread of its own: the model runs while SQLite ranks the
    words (both release the GIL), so a hybrid search waits for the slower of the two, not their sum.
    Until the model is loaded it is computed here, at once: numpy and onnxruntime must not be imported
    by two threads at the same time (numpy's import then fails half-way)."""
    global _embedding_thread
    if not embedder.loaded():  # the first search loads the model here: imports stay on one thread
        done: Future[NDArray[np.float32]] = Future()
        try:
            done.set_result(_query_vector(text, embedder.MODEL))
        except Exception as exc:
            done.set_exception(exc)
        return done
    if _embedding_thread is None:
        _embedding_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
    return _embedding_thread.submit(_query_vector, text, embedder.MODEL)


def _meaning(conn: Store, query: SearchQuery, vector: Future[NDArray[np.float32]] | None = None) -> _Meaning:
    """The index, the rows embedded for this search, the query's embedding, and how many covered rows
    still have no vector."""
    if query.embed_waiting:
        fresh, waiting = embed_for_query(conn, query.filters)
    else:
        fresh, waiting = {}, vectors.queued_count(conn, query.filters, cap=1000)
    index = vector_index.for_store(conn)
    return _Meaning(index, fresh, vector.result() if vector is not None else _query_vector(query.text or "", embedder.MODEL),
                    waiting)


def _not_embedded(result: SearchResult, waiting: int) -> SearchResult:
    if not waiting:
        return result
    from dataclasses import replace

    return replace(result, unembedded=waiting, note=(
        f"{waiting} matching observation{'s' if waiting != 1 else ''} not embedded yet (the worker is embedding"
        " them): found by keyword only" if result.mode == "hybrid" else
        f"{waiting} matching observation{'s' if waiting != 1 else ''} not embedded yet (the worker is embedding"
        " them): not compared by meaning; --mode hybrid or keyword finds them by words"))


def _page(conn: Store, query: SearchQuery, ranked: list[tuple[int, float]], total: int, match: str,
          similar: dict[int, float], meaning: _Meaning, mode: str) -> SearchResult:
    """The requested page of `ranked` (best first, or every match when ordered by date), each hit with its
    `cosine`. Only the rows shown are read, except by date, when every ranked row is."""
    wanted = ranked if query.order != "relevance" else ranked[query.offset:query.offset + query.limit]
    hits = repository.observations_by_id(conn, [row_id for row_id, _score in wanted])
    items: list[SearchHit] = [{**hits[row_id], "score": round(score, 4)} for row_id, score in wanted if row_id in hits]
    if query.order != "relevance":
        items.sort(key=lambda hit: (hit["created_at"], hit["id"]), reverse=query.order == "newest")
        items = items[query.offset:query.offset + query.limit]
    unknown = [hit["id"] for hit in items if hit["id"] not in similar]
    if unknown:
        similar = {**similar, **meaning.cosines(conn, unknown)}
    items = [{**hit, "cosine": round(similar.get(hit["id"], 0.0), 4)} for hit in items]
    return SearchResult(items=items, total=total, match=match, mode=mode)


class SemanticIndex:
    """Observations ranked by the cosine of their embedding to the query's."""

    mode = "semantic"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        meaning = _meaning(conn, query)
        # by relevance: the page and enough beyond it to count; by date: every row close enough
        requested = max(query.offset + query.limit, CANDIDATES) if query.order == "relevance" else \
            len(meaning.index) + len(meaning.fresh)
        found = meaning.nearest(conn, query.filters, requested)
        ranked = [(row_id, cosine) for row_id, cosine in found if cosine >= MIN_COSINE]
        result = _page(conn, query, ranked, len(ranked), "", dict(ranked), meaning, self.mode)
        if len(found) == requested and len(ranked) == len(found):  # more rows may be as close: a floor
            from dataclasses import replace

            result = replace(result, total_capped=True)
        return _not_embedded(result, meaning.waiting)


class HybridIndex:
    """BM25 and cosine, each min-max normalised over its top candidates, fused by weight."""

    mode = "hybrid"

    def search(self, conn: Store, query: SearchQuery) -> SearchResult:
        if query.text is None or query.kinds != ("observation",):
            return KeywordIndex().search(conn, query)
        expression = fts.keyword_expression(query.text)
        embedding = _embedding_started(query.text)
        meanings: list[_Meaning] = []  # made when first compared: the embedding runs while BM25 ranks
        asked: dict[SearchFilters, list[tuple[int, float]]] = {}

        def nearest(filters: SearchFilters, count: int) -> list[tuple[int, float]]:
            if not meanings:
                meanings.append(_meaning(conn, query, embedding))
            if filters not in asked:
                asked[filters] = meanings[0].nearest(conn, filters, count)
            return asked[filters]

        fused = hybrid_scores(conn, query, expression, nearest)
        semantic = dict(nearest(query.filters, CANDIDATES))
        meaning = meanings[0]
        ranked = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))
        return _not_embedded(_page(conn, query, ranked, len(ranked), expression, semantic, meaning, self.mode),
                             meaning.waiting)


def hybrid_scores(conn: Store, query: SearchQuery, expression: str,
                  nearest: Callable[[SearchFilters, int], list[tuple[int, float]]]) -> dict[int, float]:
    """Observation id → fused score of a hybrid search: BM25's and `nearest`'s (cosine) top candidates, and
    those of the time the query names (`priors`), fused, each row's field priors applied."""
    keyword: dict[int, float] = {}
    if expression:
        hits = repository.observation_hits(conn, expression, query.filters, "relevance", CANDIDATES).rows
        keyword = {int(hit["id"]): -float(hit["score"]) for hit in hits}  # bm25: lower is better
    semantic = dict(nearest(query.filters, CANDIDATES))
    named = priors.priors(conn, query.text, query.filters)
    window = named.window_filters(query.filters)
    if window is not None:  # the best of the time the query names join the candidates
        if expression:
            hits = repository.observation_hits(conn, expression, window, "relevance", CANDIDATES).rows
            keyword.update({int(hit["id"]): -float(hit["score"]) for hit in hits})
        semantic.update(nearest(window, CANDIDATES))
    return named.apply(conn, fuse(keyword, semantic))


def fuse(keyword: dict[int, float], semantic: dict[int, float]) -> dict[int, float]:
    """Weighted min-max fusion of BM25 scores (higher better) and cosines over the union of both lists;
    with no keyword match, only rows whose meaning is close (`MIN_COSINE`) stay."""
    fused: dict[int, float] = {}
    for weight, scores in ((1 - COSINE_WEIGHT, keyword), (COSINE_WEIGHT, semantic)):
        if not scores:
            continue
        low, high = min(scores.values()), max(scores.values())
        for row_id, score in scores.items():
            fused[row_id] = fused.get(row_id, 0.0) + weight * ((score - low) / (high - low) if high > low else 1.0)
    if not keyword:  # no word of the query matched: keep only what means something close
        fused = {row_id: score for row_id, score in fused.items() if semantic.get(row_id, 0.0) >= MIN_COSINE}
    return fused
