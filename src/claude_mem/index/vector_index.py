"""The observation vectors of one database, held in memory for search by meaning.

Vectors are int8, each unit vector scaled so that its largest component is ±127 (`quantize`); the
cosine of two of them is the cosine of their int8 values (a scale changes no angle). Below `GRAPH_FROM`
vectors the search is exact: the matrix in memory, compared by usearch's SIMD kernels (or numpy without
usearch). From `GRAPH_FROM` on, where the process allows one (the worker), an HNSW graph (usearch, i8,
cosine) answers in about a millisecond whatever the size; it is built in the background (exact search
answers meanwhile), saved beside the database and loaded at the next start when it matches the
database (same file, vectors and removals logged since are replayed), rebuilt when it does not (a
truncated or foreign file, another model).

The index follows the store through `store.vectors.marks`: vectors with an id above the last one read,
removals above the last seq. A removed vector is overwritten in the graph before its slot is freed, so
that a forgotten row's vector cannot be read back from memory or from the saved file.
`CLAUDE_MEM_VECTOR_INDEX` = `auto` (default), `exact` or `graph` forces a strategy (the benchmarks' exact
baseline in the same run).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import TYPE_CHECKING

from claude_mem.index import embedder
from claude_mem.store import Store, vectors
from claude_mem.store.search import SearchFilters

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger("claude_mem.index")

GRAPH_FROM = 20_000
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 256  # recall@10 ≥ 0.92 on clustered 100k vectors at M 16 (bench ann), ~0.7 ms
# A filtered search asks the graph for this many times more candidates than it needs, up to OVERSAMPLE_MAX;
# a filter rarer than that is searched exactly over the rows it keeps.
OVERSAMPLE_MAX = 4096
LOAD_CHUNK = 20_000
# Observation ids are SQLite's own, one per row ever stored: the index maps them to positions densely
# (4 bytes an id). An id past this (no real store reaches it) is not indexed, with a warning.
MAX_ID = 1 << 26


def strategy() -> str:
    value = os.environ.get("CLAUDE_MEM_VECTOR_INDEX", "auto").strip().lower()
    return value if value in ("auto", "exact", "graph") else "auto"


def usearch_missing() -> str | None:
    """Why the vector index library cannot load (then numpy compares exactly), or None."""
    import importlib.util

    return None if importlib.util.find_spec("usearch") else "usearch is not installed"


def quantize(matrix: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
    """Each row as int8 with its own scale (`row ≈ int8 · scale`): the row's largest component maps to ±127."""
    import numpy as np

    peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, dtype=np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return scales, np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)


def exact_cosines(matrix: NDArray[np.int8], query: NDArray[np.int8]) -> NDArray[np.float32]:
    """The cosine of `query` to every row of `matrix` (int8 values, any scale)."""
    import numpy as np

    if not len(matrix):
        return np.zeros(0, dtype=np.float32)
    dots = matrix.astype(np.float32) @ query.astype(np.float32)
    norms = np.linalg.norm(matrix.astype(np.float32), axis=1) * float(np.linalg.norm(query.astype(np.float32)))
    result: NDArray[np.float32] = (dots / np.clip(norms, 1e-12, None)).astype(np.float32)
    return result


def _best_exact(matrix: NDArray[np.int8], query: NDArray[np.int8], count: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Positions and cosines of the `count` rows of `matrix` closest to `query`, best first."""
    import numpy as np

    count = min(count, len(matrix))
    if count <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if usearch_missing() is None:
        from usearch.index import search as exact_search

        found = exact_search(matrix, query, count, "cos", exact=True, threads=1)
        return found.keys.astype(np.int64), (1.0 - found.distances).astype(np.float32)
    scores = exact_cosines(matrix, query)
    positions = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
    positions = positions[np.argsort(-scores[positions], kind="stable")]
    return positions.astype(np.int64), scores[positions]


class VectorIndex:
    """Observation ids, their project codes and int8 vectors (arrival order; removed rows masked out),
    and, from `GRAPH_FROM` rows on where allowed, an HNSW graph over the same vectors."""

    def __init__(self, model: str, graph_path: str | None = None, database: str = "") -> None:
        self.model = model
        self.graph_path = graph_path  # None: exact only (a short-lived process)
        self.database = database  # the database file's identity, "device:inode"
        self.lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        """Hold nothing (then the next sync reads everything)."""
        import numpy as np

        self.ids = np.zeros(0, dtype=np.int64)
        # observation id → its position (-1: none): finding a row, or a graph hit's project, costs no scan
        self.position_of = np.full(0, -1, dtype=np.int32)
        self.vids = np.zeros(0, dtype=np.int64)  # each vector's id in the store (a re-embedded row gets a new one)
        self.projects = np.zeros(0, dtype=np.int32)
        self.matrix = np.zeros((0, embedder.DIMENSIONS), dtype=np.int8)  # held until the graph holds the vectors
        self.flat = True
        self.alive = np.zeros(0, dtype=bool)
        self.size = self.count = 0  # positions used, vectors alive
        self.codes: dict[str, int] = {}
        self.last_vector = self.last_removal = 0
        self.generation = -1
        self.graph: object | None = None  # usearch.index.Index, once built or loaded
        self.graph_holds = 0  # the last vector id the graph was built or saved with
        self.building = False
        self.dirty = False  # the graph changed since it was saved

    # -- following the store ------------------------------------------------------------------------------

    def sync(self, conn: Store) -> None:
        """Read what changed in the store since the last sync (everything, the first time)."""
        with self.lock:
            generation = vectors.generation(conn)
            if generation == self.generation:
                return
            with vectors.snapshot(conn):  # removals and additions seen together
                gone = vectors.removals(conn, self.last_removal)
                if gone is None:  # the log was trimmed past us: start over
                    self._reset()
                    gone = []
                if gone:
                    self._remove([row_id for _seq, row_id in gone])
                    self.last_removal = gone[-1][0]
                elif self.size == 0:
                    self.last_removal = vectors.marks(conn)[1]
                first = self.size == 0
                if first:  # every array sized once: growing by copies would leave the heap fragmented
                    self._reserve(vectors.observation_vector_count(conn, self.model))
                while rows := vectors.observation_vectors(conn, self.model, self.last_vector, LOAD_CHUNK):
                    self._add(rows, fresh=first)
                    self.last_vector = rows[-1][0]
                self.generation = generation
            if first and self.size > LOAD_CHUNK:
                embedder.release_freed_memory()

    def _reserve(self, capacity: int) -> None:
        """Room for `capacity` vectors in all (positions already used are kept)."""
        import numpy as np

        if capacity <= len(self.ids):
            return
        self.ids = np.resize(self.ids, capacity)
        self.vids = np.resize(self.vids, capacity)
        self.projects = np.resize(self.projects, capacity)
        self.alive = np.resize(self.alive, capacity)
        if self.flat:
            grown = np.zeros((capacity, embedder.DIMENSIONS), dtype=np.int8)
            grown[: self.size] = self.matrix[: self.size]
            self.matrix = grown

    def _add(self, rows: list[tuple[int, int, str, bytes]], fresh: bool = False) -> None:
        """Hold these vectors (`fresh`: a first load, where no row can be held already)."""
        import numpy as np

        size = embedder.DIMENSIONS
        unfit = [row for row in rows if len(row[3]) != size or not 0 <= row[1] < MAX_ID]
        if unfit:  # not comparable (a damaged row, another model's size), or an id past any real store's
            log.warning("skipped %d vectors: not %d dimensions, or an observation id past %d", len(unfit), size, MAX_ID)
            rows = [row for row in rows if len(row[3]) == size and 0 <= row[1] < MAX_ID]
            if not rows:
                return
        ids = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
        vids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        if fresh or not self.size:
            again = ids[:0]
        else:
            again = ids[self._positions(ids) >= 0]
        if len(again):  # a row re-embedded (INSERT OR REPLACE logs no removal): its old vector goes first
            self._remove(again.tolist())
        matrix = np.frombuffer(b"".join(row[3] for row in rows), dtype=np.int8).reshape(len(rows), size)
        codes = np.fromiter((self.codes.setdefault(row[2], len(self.codes)) for row in rows), dtype=np.int32,
                            count=len(rows))
        needed = self.size + len(rows)
        if needed > len(self.ids):
            self._reserve(max(needed, len(self.ids) + len(self.ids) // 4, 1024))
        end = self.size + len(rows)
        self.ids[self.size:end], self.vids[self.size:end], self.projects[self.size:end] = ids, vids, codes
        highest = int(ids.max())
        if highest >= len(self.position_of):
            grown = np.full(max(highest + 1, len(self.position_of) + len(self.position_of) // 4), -1, dtype=np.int32)
            grown[: len(self.position_of)] = self.position_of
            self.position_of = grown
        self.position_of[ids] = np.arange(self.size, end, dtype=np.int32)
        if self.flat:
            self.matrix[self.size:end] = matrix
        self.alive[self.size:end] = True
        self.size, self.count = end, self.count + len(rows)
        if self.graph is not None and not self.building:
            self.graph.add(ids, matrix, threads=1)  # type: ignore[attr-defined]
            self.dirty = True

    def _positions(self, row_ids: NDArray[np.int64]) -> NDArray[np.int32]:
        """The position of each of these observation ids (-1 where none is held)."""
        import numpy as np

        inside = (row_ids >= 0) & (row_ids < len(self.position_of))
        found = np.full(len(row_ids), -1, dtype=np.int32)
        found[inside] = self.position_of[row_ids[inside]]
        return found

    def _remove(self, row_ids: list[int]) -> None:
        import numpy as np

        if not self.size:
            return
        positions = self._positions(np.array(row_ids, dtype=np.int64))
        positions = positions[positions >= 0]
        self.alive[positions] = False
        self.position_of[self.ids[positions]] = -1
        self.count -= len(positions)
        if self.flat:
            self.matrix[positions] = 0  # nothing of a removed vector stays readable in memory
        if self.graph is not None and not self.building:
            _erase(self.graph, self.ids[positions])
            self.dirty = True

    # -- searching ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.count

    def _mask(self, conn: Store, filters: SearchFilters) -> NDArray[np.bool_] | None:
        """Which positions pass `filters` (None: all alive ones)."""
        from dataclasses import replace

        import numpy as np

        if filters == SearchFilters():
            return None
        keep = self.alive[: self.size].copy()
        if filters.project is not None:
            keep &= self.projects[: self.size] == self.codes.get(filters.project, -1)
        if replace(filters, project=None) != SearchFilters():  # type, dates, file, concept: ask the store
            keep &= np.isin(self.ids[: self.size], np.array(vectors.filtered_observation_ids(conn, filters), dtype=np.int64))
        return keep

    def nearest(self, conn: Store, query: NDArray[np.float32], filters: SearchFilters, count: int
                ) -> list[tuple[int, float]]:
        """The `count` observations closest to `query` that pass `filters`: (id, cosine), best first."""
        import numpy as np

        with self.lock:
            mask = self._mask(conn, filters)
            alive = self.alive[: self.size] if mask is None else mask
            wanted = int(alive.sum())
            if not wanted or count <= 0:
                return []
            _scale, quantized = quantize(query[None, :])
            graph = self.graph if not self.building and strategy() != "exact" else None
            if graph is not None:
                oversample = max(1, len(self) // wanted) * 2 if mask is not None else 1
                if count * oversample <= OVERSAMPLE_MAX:
                    found = graph.search(quantized[0], min(count * oversample, len(self)), threads=1)  # type: ignore[attr-defined]
                    keys, cosines = found.keys.astype(np.int64), (1.0 - found.distances).astype(np.float32)
                    if mask is not None:
                        at = self._positions(keys)
                        keep = at >= 0
                        keep[keep] = mask[at[keep]]
                        keys, cosines = keys[keep], cosines[keep]
                    if len(keys) >= min(count, wanted):
                        return [(int(key), float(cosine)) for key, cosine in zip(keys[:count], cosines[:count], strict=True)]
            positions = np.flatnonzero(alive)
            if self.flat:
                matrix, ids = self.matrix[positions], self.ids[positions]
            else:  # a rare filter over a large store: its rows' vectors read from the store
                ids, matrix = self._stored(conn, self.ids[positions])
            best, cosines = _best_exact(matrix, quantized[0], count)
            return [(int(ids[p]), float(c)) for p, c in zip(best, cosines, strict=True)]

    def _stored(self, conn: Store, row_ids: NDArray[np.int64] | list[int]) -> tuple[NDArray[np.int64], NDArray[np.int8]]:
        """These observations' ids and int8 vectors as the store holds them (a vector of another size left out)."""
        import numpy as np

        found = vectors.observation_vectors_of(conn, self.model, [int(row_id) for row_id in row_ids])
        found = [(row_id, vector) for row_id, vector in found if len(vector) == embedder.DIMENSIONS]
        ids = np.fromiter((row_id for row_id, _v in found), dtype=np.int64, count=len(found))
        matrix = np.frombuffer(b"".join(vector for _id, vector in found), dtype=np.int8).reshape(len(found), -1) \
            if found else np.zeros((0, embedder.DIMENSIONS), dtype=np.int8)
        return ids, matrix

    def cosines(self, conn: Store, query: NDArray[np.float32], row_ids: list[int]) -> dict[int, float]:
        """The cosine of `query` to each of these observations that has a vector (read from the store: a
        handful of rows, where finding them in memory would scan every id)."""
        ids, matrix = self._stored(conn, row_ids)
        if not len(ids):
            return {}
        _scale, quantized = quantize(query[None, :])
        return {int(row_id): float(score) for row_id, score in zip(ids, exact_cosines(matrix, quantized[0]), strict=True)}

    # -- the graph -------------------------------------------------------------------------------------

    def wants_graph(self) -> bool:
        if self.graph_path is None or usearch_missing() is not None or strategy() == "exact":
            return False
        return strategy() == "graph" or len(self) >= GRAPH_FROM

    def build_graph(self) -> None:
        """Load the saved graph if it belongs to this database, else build one from the vectors in memory
        (slow: the worker runs it on a thread; exact search answers meanwhile); then bring it in step."""
        import numpy as np

        with self.lock:
            if self.graph is not None or self.building or not self.wants_graph():
                return
            self.building = True
            alive = self.alive[: self.size]
            ids, matrix = self.ids[: self.size][alive].copy(), self.matrix[: self.size][alive].copy()
            holds = self.last_vector
        try:
            saved = self._load_saved()
            if saved is not None:
                graph, holds = saved
            else:
                graph = _new_graph()
                if len(ids):
                    graph.add(ids, matrix, threads=1)  # type: ignore[attr-defined]
        except BaseException:
            with self.lock:
                self.building = False
            raise
        with self.lock:
            self.graph, self.building, self.graph_holds = graph, False, holds
            self._reconcile()
            self.dirty = True
            # the graph holds every vector now: the matrix goes (~40 MB at 100k rows)
            self.flat, self.matrix = False, np.zeros((0, embedder.DIMENSIONS), dtype=np.int8)
        del ids, matrix
        embedder.release_freed_memory()

    def _reconcile(self) -> None:
        """Make the graph hold exactly the alive vectors in memory: drop what is gone, add what it lacks
        or holds an older vector of (a row re-embedded after the graph was built or saved)."""
        import numpy as np

        assert self.graph is not None
        alive = self.alive[: self.size]
        alive_ids = self.ids[: self.size][alive]
        held = np.asarray(self.graph.keys, dtype=np.int64)  # type: ignore[attr-defined]
        stale = np.flatnonzero(alive & (self.vids[: self.size] > self.graph_holds))
        _erase(self.graph, np.union1d(np.setdiff1d(held, alive_ids), self.ids[stale]))
        missing = np.flatnonzero(alive)[np.isin(alive_ids, np.asarray(self.graph.keys, dtype=np.int64), invert=True)]  # type: ignore[attr-defined]
        if len(missing):
            self.graph.add(self.ids[missing], self.matrix[missing], threads=1)  # type: ignore[attr-defined]
        self.graph_holds = self.last_vector

    def _meta_path(self) -> str:
        assert self.graph_path is not None
        return self.graph_path + ".json"

    def _load_saved(self) -> tuple[object, int] | None:
        """The saved graph and the last vector id it holds, if it is whole and of this model and database
        file; else None (then it is rebuilt)."""
        if self.graph_path is None or not os.path.exists(self.graph_path):
            return None
        try:
            with open(self._meta_path(), encoding="utf-8") as handle:
                meta = json.load(handle)
            if (meta.get("model"), meta.get("dimensions"), meta.get("database")) != \
                    (self.model, embedder.DIMENSIONS, self.database) or int(meta.get("holds", -1)) > self.last_vector:
                return None  # another model, another database, or a database restored from before it
            from usearch.index import Index

            graph = Index.restore(self.graph_path)
            if graph is None or graph.ndim != embedder.DIMENSIONS or len(graph) != meta.get("count"):
                raise ValueError("the saved vector index does not match its description")
            graph.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # (a setter mypy misses) a saved file keeps its own
            return graph, int(meta["holds"])
        except Exception as exc:  # truncated, foreign, unreadable: build a new one
            log.warning("rebuilding the vector index (%s: %s)", type(exc).__name__, exc)
            return None

    def save(self) -> None:
        """Write the graph beside the database when it changed since the last save: to a temporary file
        renamed over the old one, its description after it (a crash between leaves a pair that does not
        match, which the next start rebuilds)."""
        with self.lock:
            if self.graph is None or not self.dirty or self.graph_path is None:
                return
            os.makedirs(os.path.dirname(self.graph_path), exist_ok=True)
            partial = f"{self.graph_path}.{os.getpid()}.tmp"
            try:
                self.graph.save(partial)  # type: ignore[attr-defined]
                os.replace(partial, self.graph_path)
            finally:
                if os.path.exists(partial):
                    os.unlink(partial)
            meta = {"model": self.model, "dimensions": embedder.DIMENSIONS, "database": self.database,
                    "holds": self.last_vector, "count": len(self.graph)}  # type: ignore[arg-type]
            from claude_mem.fastpath import files

            files.replace_atomically(self._meta_path(), json.dumps(meta).encode())
            self.dirty = False


def _new_graph() -> object:
    from usearch.index import Index

    return Index(ndim=embedder.DIMENSIONS, metric="cos", dtype="i8", connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def _erase(graph: object, keys: NDArray[np.int64]) -> None:
    """Remove `keys` from the graph, overwriting each one's vector first (usearch frees a slot without
    clearing it, and reuses it for the next vector added): a removed vector is not recoverable."""
    import numpy as np

    keys = np.asarray(keys, dtype=np.int64)
    present = keys[np.fromiter((int(key) in graph for key in keys), dtype=np.bool_, count=len(keys))]  # type: ignore[operator]
    if not len(present):
        return
    graph.remove(present)  # type: ignore[attr-defined]
    blank = np.ones((len(present), embedder.DIMENSIONS), dtype=np.int8)
    graph.add(present, blank, threads=1)  # type: ignore[attr-defined]
    graph.remove(present)  # type: ignore[attr-defined]


# One index per database file and model in this process.
_INDEXES: dict[tuple[str, str], VectorIndex] = {}
_INDEXES_LOCK = threading.Lock()
_graph_dir: str | None = None


def allow_graphs(directory: str) -> None:
    """This process keeps HNSW graphs (the worker), saved under `directory`."""
    global _graph_dir
    _graph_dir = directory


def for_store(conn: Store, model: str = embedder.MODEL) -> VectorIndex:
    """This process's index of `conn`'s database, synced with it."""
    key = (vectors.database_file(conn), model)
    with _INDEXES_LOCK:
        index = _INDEXES.get(key)
        if index is None or not key[0]:
            path = os.path.join(_graph_dir, f"{model}.usearch") if _graph_dir and key[0] else None
            index = _INDEXES[key] = VectorIndex(model, path, _identity(key[0]))
    index.sync(conn)
    return index


def _identity(path: str) -> str:
    try:
        found = os.stat(path)
    except OSError:
        return ""
    return f"{found.st_dev}:{found.st_ino}"


def loaded() -> list[VectorIndex]:
    with _INDEXES_LOCK:
        return list(_INDEXES.values())
