"""`python -m bench ann [--quick] [--sizes 10k,100k,1m] [--check-wheels | --no-wheels]` (and, run alone,
`--methods a,b --builds 16:128,32:128 --expansions 16,64 --real N`): vector index libraries compared on
this machine (issue 28, item 3), all against exact float32 search measured in the same run.

Candidates, each run in a process of its own (so its memory is its own), one thread everywhere (the worker
answers a query on one thread; the machine's 2 cores are shared):
- `numpy-f32-exact`: the baseline — `matrix @ query`, then `argpartition` (what `index/semantic.py` did);
- `usearch-exact-i8`: usearch's brute force over int8 vectors;
- `usearch-hnsw-f32`, `usearch-hnsw-i8`: usearch's HNSW graph;
- `faiss-hnsw-f32`: faiss-cpu `IndexHNSWFlat` (inner product) in an `IndexIDMap2` (our row ids);
- `sqlite-vec-f32`, `sqlite-vec-i8`: a sqlite-vec `vec0` table (brute force) in a database file.
int8 vectors are quantised per vector (`round(v / max|v| · 127)`: the scale drops out of a cosine).

Per candidate and store size: build time, query p50/p95 (wall, one query at a time) and its ratio to the
exact float32 p50 measured in the same process (interleaved query by query), recall@10 against exact
float32 search, the structure's own bytes and the process's RSS growth from building it, and whether a
removed vector is gone: from the answers, and its bytes from the saved file (a forget must leave nothing
recoverable). HNSW parameters are swept (connectivity, expansion_add per build; expansion_search per query
pass); the chosen ones reach recall@10 ≥ 0.95 at the lowest p50.

Data: real all-MiniLM-L6-v2 embeddings of generated observation texts (title + narrative, words of
bench_recall's Zipf vocabulary), cached in ~/.cache/claude-mem-bench/ (`CLAUDE_MEM_BENCH_CACHE`); a
larger store repeats them as jittered copies (real vector + gaussian noise σ = 0.02 per dimension,
renormalised: cosine ≈ 0.93 to its source). Queries: the standard query set (bench-queries.txt) and
held-out observation texts, embedded by the same model and never in the store.

Wheels: whether `pip download --only-binary=:all: --platform … --no-deps` finds a wheel for CPython 3.11 on
Linux x86_64/aarch64 and macOS arm64/x86_64, with its size; recorded with the date checked (kept 30 days
in the cache dir; `--check-wheels` checks again now, `--no-wheels` leaves it out).
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.bench_recall import QUERIES, percentile, zipf_sampler

K = 10
RECALL_TARGET = 0.95
JITTER_SIGMA = 0.02
DIMENSIONS = 384
SIZES = (10_000, 100_000)
QUICK_SIZES = (10_000,)
REAL_SAMPLE = 4_000  # real embeddings in the cache (the first ones are the store, the last HELD_OUT queries)
QUICK_REAL_SAMPLE = 1_000
HELD_OUT = 150
BUILDS = ((8, 64), (16, 128), (32, 128))  # (connectivity, expansion_add) of each HNSW build
QUICK_BUILDS = ((16, 128),)
EXPANSIONS = (16, 32, 64, 128, 256, 512)  # expansion_search, swept per build
QUICK_EXPANSIONS = (16, 64, 128)
EXACT = ("numpy-f32-exact", "usearch-exact-i8", "sqlite-vec-f32", "sqlite-vec-i8")
GRAPHS = ("usearch-hnsw-f32", "usearch-hnsw-i8", "faiss-hnsw-f32")
METHODS = (*EXACT, *GRAPHS)
BASELINE = "numpy-f32-exact"
BASELINE_QUERIES = 100  # exact float32 queries interleaved with each candidate's first pass
CHILD_TIMEOUT_S = 3_600
CACHE = os.environ.get("CLAUDE_MEM_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "claude-mem-bench")
WHEEL_PACKAGES = ("usearch", "faiss-cpu", "sqlite-vec", "hnswlib")
PLATFORMS = {  # pip's --platform tags (it expands manylinux2014 and macOS versions downwards itself)
    "linux-x86_64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
    "linux-aarch64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
    "macos-arm64": ("macosx_14_0_arm64",),
    "macos-x86_64": ("macosx_14_0_x86_64",),
}
WHEELS_KEPT_DAYS = 30


def progress(message: str) -> None:
    print(f"  ann: {message}", file=sys.stderr, flush=True)


# ---- data -----------------------------------------------------------------------------------------------

def observation_texts(count: int, seed: int = 7) -> list[str]:
    """`count` observation texts as the worker embeds them (title, subtitle, narrative), always the same."""
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    return [" ".join(draw(rng.randint(6, 12))).capitalize() + "\n\n" + " ".join(draw(rng.randint(25, 60))) + "."
            for _ in range(count)]


def real_sample(count: int) -> Any:
    """(count, 384) float32 MiniLM embeddings of `observation_texts(count)`: read from the cache, the missing
    tail embedded (and the cache extended)."""
    import numpy as np

    from claude_mem.index import embedder

    path = os.path.join(CACHE, f"minilm-observations-{embedder.MODEL}.npy")
    have = np.load(path) if os.path.exists(path) else np.zeros((0, DIMENSIONS), dtype=np.float32)
    if len(have) >= count:
        return have[:count]
    texts = observation_texts(count)[len(have):]
    progress(f"embedding {len(texts):,} observation texts with the real model (cached in {CACHE}) …")
    model = embedder.shared()
    parts = [have] + [model.embed(texts[start:start + 32]) for start in range(0, len(texts), 32)]
    matrix = np.concatenate(parts).astype(np.float32)
    os.makedirs(CACHE, exist_ok=True)
    np.save(path + ".tmp.npy", matrix)
    os.replace(path + ".tmp.npy", path)
    return matrix


def query_vectors(real: Any) -> Any:
    """The standard query set and the held-out observations (the sample's last HELD_OUT rows), embedded."""
    import numpy as np

    from claude_mem.index import embedder

    with open(QUERIES, encoding="utf-8") as handle:
        texts = [line.strip() for line in handle if line.strip()]
    return np.concatenate([embedder.shared().embed(texts), real[-HELD_OUT:]]).astype(np.float32)


def jittered_store(real: Any, size: int, seed: int = 3) -> Any:
    """`size` unit vectors: the real ones first, then jittered copies of them in turn."""
    import numpy as np

    base = real[:-HELD_OUT]
    if size <= len(base):
        return np.ascontiguousarray(base[:size])
    rng = np.random.default_rng(seed)
    store = np.empty((size, base.shape[1]), dtype=np.float32)
    store[:len(base)] = base
    for start in range(len(base), size, 65_536):
        stop = min(size, start + 65_536)
        block = base[np.arange(start, stop) % len(base)] + rng.normal(0, JITTER_SIGMA, (stop - start, base.shape[1]))
        store[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return store


def quantise(matrix: Any) -> Any:
    """int8 per vector: `round(v / max|v| · 127)` (a cosine ignores the scale)."""
    import numpy as np

    peak = np.clip(np.abs(matrix).max(axis=-1, keepdims=True), 1e-12, None)
    return np.round(matrix / peak * 127).astype(np.int8)


def exact_top(store: Any, queries: Any, k: int = K) -> Any:
    """The ids of the `k` best cosines of each query: the truth every recall is measured against."""
    import numpy as np

    scores = queries @ store.T
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
    return np.take_along_axis(top, order, axis=1)


# ---- candidates (run in a child process) -----------------------------------------------------------------

class Candidate:
    """One library's index over the store: built once, then asked one query at a time."""

    expansions: tuple[int, ...] = (0,)  # query-time settings swept (0: none)

    def build(self, store: Any) -> None:
        raise NotImplementedError

    def tune(self, expansion: int) -> None:
        """Apply one query-time setting (expansion_search / efSearch)."""

    def query(self, vector: Any) -> list[int]:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        """Remove `key`; {removal, answers_without_it, bytes_gone} (bytes: of the saved / serialised form)."""
        raise NotImplementedError


class NumpyExact(Candidate):
    def build(self, store: Any) -> None:
        self.matrix = store

    def query(self, vector: Any) -> list[int]:
        import numpy as np

        scores = self.matrix @ vector
        top = np.argpartition(-scores, K)[:K]
        return [int(i) for i in top[np.argsort(-scores[top])]]

    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        return {"removal": True, "answers_without_it": True, "bytes_gone": True, "how": "row dropped from the matrix"}


class UsearchExact(Candidate):
    def build(self, store: Any) -> None:
        self.matrix = quantise(store)

    def query(self, vector: Any) -> list[int]:
        from usearch.index import MetricKind, search

        return [int(i) for i in search(self.matrix, quantise(vector), K, MetricKind.Cos, exact=True, threads=1).keys]

    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        return {"removal": True, "answers_without_it": True, "bytes_gone": True, "how": "row dropped from the matrix"}


class UsearchGraph(Candidate):
    def __init__(self, dtype: str, connectivity: int, expansion_add: int, expansions: tuple[int, ...]) -> None:
        self.dtype, self.connectivity, self.expansion_add, self.expansions = dtype, connectivity, expansion_add, expansions

    def _cast(self, matrix: Any) -> Any:
        return quantise(matrix) if self.dtype == "i8" else matrix

    def build(self, store: Any) -> None:
        import numpy as np
        from usearch.index import Index

        self.index = Index(ndim=store.shape[1], metric="cos", dtype=self.dtype, connectivity=self.connectivity,
                           expansion_add=self.expansion_add)
        for start in range(0, len(store), 65_536):  # a quantised copy of one block at a time
            block = store[start:start + 65_536]
            self.index.add(np.arange(start, start + len(block), dtype=np.uint64), self._cast(block), threads=1)

    def tune(self, expansion: int) -> None:
        self.index.expansion_search = expansion

    def query(self, vector: Any) -> list[int]:
        return [int(i) for i in self.index.search(self._cast(vector), K, threads=1).keys]

    def nbytes(self) -> int:
        return int(self.index.serialized_length)  # what a saved (or memory-mapped) index takes

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        self.index.remove(key)
        gone = key not in self.query(vector)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "index.usearch")
            self.index.save(path)
            with open(path, "rb") as handle:
                kept = self._cast(vector[None, :]).tobytes() in handle.read()
        return {"removal": True, "answers_without_it": gone, "bytes_gone": not kept,
                "how": "Index.remove marks the node; its vector stays in the saved file until the index is rebuilt"
                if kept else "Index.remove"}


class FaissGraph(Candidate):
    def __init__(self, connectivity: int, expansion_add: int, expansions: tuple[int, ...]) -> None:
        self.connectivity, self.expansion_add, self.expansions = connectivity, expansion_add, expansions

    def build(self, store: Any) -> None:
        import faiss
        import numpy as np

        faiss.omp_set_num_threads(1)
        self.graph = faiss.IndexHNSWFlat(store.shape[1], self.connectivity, faiss.METRIC_INNER_PRODUCT)
        self.graph.hnsw.efConstruction = self.expansion_add
        self.index = faiss.IndexIDMap2(self.graph)
        self.index.add_with_ids(store, np.arange(len(store), dtype=np.int64))

    def tune(self, expansion: int) -> None:
        self.graph.hnsw.efSearch = expansion

    def query(self, vector: Any) -> list[int]:
        return [int(i) for i in self.index.search(vector[None, :], K)[1][0]]

    def nbytes(self) -> int:
        import faiss

        return int(faiss.serialize_index(self.index).nbytes)

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        import numpy as np

        try:
            self.index.remove_ids(np.array([key], dtype=np.int64))
        except RuntimeError as exc:
            return {"removal": False, "answers_without_it": False, "bytes_gone": False,
                    "how": str(exc).strip().splitlines()[-1][-120:]}
        return {"removal": True, "answers_without_it": key not in self.query(vector), "bytes_gone": None, "how": "remove_ids"}


class SqliteVec(Candidate):
    """A vec0 table in a database file (secure_delete on, as the store runs), brute force."""

    def __init__(self, dtype: str, folder: str) -> None:
        self.dtype, self.path = dtype, os.path.join(folder, f"vec-{dtype}.db")
        self.wrap = "vec_int8(?)" if dtype == "i8" else "?"

    def _connect(self) -> Any:
        import sqlite3

        import sqlite_vec

        if hasattr(sqlite3.Connection, "enable_load_extension"):
            conn: Any = sqlite3.connect(self.path, isolation_level=None)
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            return conn
        import apsw  # this Python's sqlite3 cannot load extensions (pyenv and macOS builds often cannot)

        conn = apsw.Connection(self.path)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        return conn

    def _cast(self, matrix: Any) -> Any:
        return quantise(matrix) if self.dtype == "i8" else matrix

    def build(self, store: Any) -> None:
        self.conn = self._connect()
        kind = "int8" if self.dtype == "i8" else "float"
        self.conn.execute("PRAGMA secure_delete = ON")
        self.conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding {kind}[{store.shape[1]}] distance_metric=cosine)")
        self.conn.execute("BEGIN")
        for start in range(0, len(store), 65_536):
            block = self._cast(store[start:start + 65_536])
            self.conn.executemany(f"INSERT INTO v (rowid, embedding) VALUES (?, {self.wrap})",
                                  ((start + n, row.tobytes()) for n, row in enumerate(block)))
        self.conn.execute("COMMIT")

    def query(self, vector: Any) -> list[int]:
        return [int(row[0]) for row in self.conn.execute(
            f"SELECT rowid FROM v WHERE embedding MATCH {self.wrap} AND k = {K} ORDER BY distance",
            (self._cast(vector).tobytes(),))]

    def nbytes(self) -> int:
        return os.path.getsize(self.path)

    def forget(self, key: int, vector: Any) -> dict[str, Any]:
        self.conn.execute("DELETE FROM v WHERE rowid = ?", (key,))
        gone = key not in self.query(vector)
        with open(self.path, "rb") as handle:
            kept = self._cast(vector).tobytes() in handle.read()
        return {"removal": True, "answers_without_it": gone, "bytes_gone": not kept, "how": "DELETE (secure_delete on)"}


def candidate(spec: dict[str, Any], folder: str) -> Candidate:
    method, expansions = spec["method"], tuple(spec.get("expansions") or (0,))
    if method == "numpy-f32-exact":
        return NumpyExact()
    if method == "usearch-exact-i8":
        return UsearchExact()
    if method.startswith("usearch-hnsw-"):
        return UsearchGraph(method.rsplit("-", 1)[1], spec["connectivity"], spec["expansion_add"], expansions)
    if method == "faiss-hnsw-f32":
        return FaissGraph(spec["connectivity"], spec["expansion_add"], expansions)
    if method.startswith("sqlite-vec-"):
        return SqliteVec(method.rsplit("-", 1)[1], folder)
    raise ValueError(f"unknown method {method!r}")


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def recall(found: list[int], truth: Any) -> float:
    return len(set(found) & {int(i) for i in truth}) / len(truth)


def timed(call: Callable[[], list[int]]) -> tuple[float, list[int]]:
    start = time.perf_counter()
    found = call()
    return (time.perf_counter() - start) * 1000, found


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """Build one candidate over the store in `spec["data"]` and measure it (this process is its own)."""
    import numpy as np

    folder = spec["data"]
    store = np.load(os.path.join(folder, "store.npy"))
    queries = np.load(os.path.join(folder, "queries.npy"))
    truth = np.load(os.path.join(folder, "truth.npy"))
    baseline = NumpyExact()
    baseline.build(store)
    gc.collect()
    before = rss_mb()
    index = candidate(spec, folder)
    started = time.perf_counter()
    index.build(store)
    build_s = time.perf_counter() - started
    gc.collect()
    grown = rss_mb() - before
    passes, exact_ms = [], []
    for number, expansion in enumerate(index.expansions):
        index.tune(expansion)
        for vector in queries[:20]:  # warm
            index.query(vector)
        times, recalls = [], []
        for position, vector in enumerate(queries):
            elapsed, found = timed(lambda vector=vector: index.query(vector))
            times.append(elapsed)
            recalls.append(recall(found, truth[position]))
            if number == 0 and position < BASELINE_QUERIES:  # the baseline, interleaved query by query
                exact_ms.append(timed(lambda vector=vector: baseline.query(vector))[0])
        passes.append({"expansion_search": expansion or None, "p50_ms": round(statistics.median(times), 3),
                       "p95_ms": round(percentile(times, 0.95), 3), "recall_at_10": round(statistics.fmean(recalls), 4)})
    exact_p50 = statistics.median(exact_ms)
    for figures in passes:
        figures["ratio_to_exact_f32"] = round(figures["p50_ms"] / exact_p50, 3)
    removed = index.forget(0, store[0])
    return {"method": spec["method"], "connectivity": spec.get("connectivity"), "expansion_add": spec.get("expansion_add"),
            "build_s": round(build_s, 3), "build_us_per_vector": round(build_s * 1e6 / len(store), 1),
            "bytes": index.nbytes(), "bytes_per_vector": round(index.nbytes() / len(store), 1),
            "rss_growth_mb": round(grown, 1), "exact_f32_p50_ms": round(exact_p50, 3), "passes": passes, "forget": removed}


# ---- the parent: data, children, choice ------------------------------------------------------------------

def available(method: str) -> str | None:
    """Why `method` cannot run here, or None."""
    import importlib.util

    needs = {"usearch": "usearch", "faiss": "faiss", "sqlite-vec": "sqlite_vec"}
    for prefix, module in needs.items():
        if method.startswith(prefix) and importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    if method.startswith("sqlite-vec"):
        import sqlite3

        if not hasattr(sqlite3.Connection, "enable_load_extension") and importlib.util.find_spec("apsw") is None:
            return "this Python's sqlite3 cannot load extensions and apsw is not installed"
    return None


def spawn(spec: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "bench.bench_ann", "--child", json.dumps(spec)], capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if done.returncode != 0:
        return {"method": spec["method"], "error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def choose(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The build and expansion_search that reach recall@10 ≥ RECALL_TARGET at the lowest p50 (else the best recall)."""
    options = [(run, figures) for run in runs if "passes" in run for figures in run["passes"]]
    if not options:
        return None
    good = [option for option in options if option[1]["recall_at_10"] >= RECALL_TARGET]
    run, figures = min(good, key=lambda o: o[1]["p50_ms"]) if good else max(options, key=lambda o: o[1]["recall_at_10"])
    return {"connectivity": run["connectivity"], "expansion_add": run["expansion_add"], **figures,
            "meets_recall": bool(good), "build_s": run["build_s"], "build_us_per_vector": run["build_us_per_vector"],
            "bytes_per_vector": run["bytes_per_vector"], "rss_growth_mb": run["rss_growth_mb"], "forget": run["forget"]}


def bench_size(size: int, real: Any, queries: Any, methods: tuple[str, ...], builds: tuple[tuple[int, int], ...],
               expansions: tuple[int, ...]) -> dict[str, Any]:
    import numpy as np

    store = jittered_store(real, size)
    with tempfile.TemporaryDirectory(prefix="bench-ann-") as folder:
        np.save(os.path.join(folder, "store.npy"), store)
        np.save(os.path.join(folder, "queries.npy"), queries)
        np.save(os.path.join(folder, "truth.npy"), exact_top(store, queries))
        del store
        found: dict[str, Any] = {}
        for method in methods:
            reason = available(method)
            if reason:
                found[method] = {"unavailable": reason}
                continue
            specs = [{"method": method, "data": folder}] if method in EXACT else [
                {"method": method, "data": folder, "connectivity": c, "expansion_add": e, "expansions": list(expansions)}
                for c, e in builds]
            runs = []
            for spec in specs:
                progress(f"{size:,} vectors: {method}" + (f" connectivity {spec['connectivity']}, expansion_add "
                                                          f"{spec['expansion_add']}" if "connectivity" in spec else "") + " …")
                runs.append(spawn(spec))
            found[method] = {"runs": runs, "chosen": choose(runs)}
    return found


def sizes_option(argv: list[str], default: tuple[int, ...]) -> tuple[int, ...]:
    """`--sizes 10k,100k,1m` (or plain numbers)."""
    from bench.bench_search import option

    given = option(argv, "--sizes")
    if not given:
        return default
    scale = {"k": 1_000, "m": 1_000_000}
    return tuple(int(float(part[:-1]) * scale[part[-1].lower()]) if part[-1].lower() in scale else int(part)
                 for part in given.split(","))


def pairs_option(argv: list[str], name: str, default: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """`--builds 16:128,32:128`: (connectivity, expansion_add) pairs."""
    from bench.bench_search import option

    given = option(argv, name)
    return tuple((int(a), int(b)) for a, b in (part.split(":") for part in given.split(","))) if given else default


def ints_option(argv: list[str], name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    from bench.bench_search import option

    given = option(argv, name)
    return tuple(int(part) for part in given.split(",")) if given else default


# ---- wheels ----------------------------------------------------------------------------------------------

def wheel_availability(refresh: bool) -> dict[str, Any]:
    """{checked, when, packages: {package: {platform: wheel name and MB, or null}}}: from the cache while it is
    younger than WHEELS_KEPT_DAYS, else (or with `refresh`) asked of the package index now."""
    path = os.path.join(CACHE, "wheels.json")
    if not refresh and os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            kept: dict[str, Any] = json.load(handle)
        if datetime.now(UTC) - datetime.fromisoformat(kept["when"]) < timedelta(days=WHEELS_KEPT_DAYS):
            return {**kept, "checked": f"recorded {kept['when'][:10]} (kept {WHEELS_KEPT_DAYS} days; --check-wheels)"}
    progress("asking the package index for wheels (pip download --only-binary=:all: --platform …) …")
    packages: dict[str, dict[str, Any]] = {}
    for package in WHEEL_PACKAGES:
        packages[package] = {}
        for name, tags in PLATFORMS.items():
            with tempfile.TemporaryDirectory() as tmp:
                platform_args = [arg for tag in tags for arg in ("--platform", tag)]
                done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                                       *platform_args, "--python-version", "3.11", "--dest", tmp, package],
                                      capture_output=True, text=True, timeout=600)
                files = os.listdir(tmp) if done.returncode == 0 else []
                packages[package][name] = {"wheel": files[0], "mb": round(
                    os.path.getsize(os.path.join(tmp, files[0])) / 2**20, 2)} if files else None
    found = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "python": "cp311", "packages": packages}
    os.makedirs(CACHE, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(found, handle, indent=1)
    return {**found, "checked": "at bench time"}


# ---- main ------------------------------------------------------------------------------------------------

def main(argv: list[str]) -> dict[str, Any]:
    import numpy as np

    from claude_mem.index import embedder

    quick = "--quick" in argv
    reason = embedder.unavailable()
    if reason:
        return {"unavailable": reason}
    sizes = sizes_option(argv, QUICK_SIZES if quick else SIZES)
    methods = option_list(argv, "--methods") or METHODS
    builds = pairs_option(argv, "--builds", QUICK_BUILDS if quick else BUILDS)
    expansions = ints_option(argv, "--expansions", QUICK_EXPANSIONS if quick else EXPANSIONS)
    real = real_sample(int_option(argv, "--real", QUICK_REAL_SAMPLE if quick else REAL_SAMPLE))
    queries = query_vectors(real)
    report: dict[str, Any] = {
        "data": {"real_vectors": len(real) - HELD_OUT, "model": embedder.MODEL, "jitter_sigma": JITTER_SIGMA,
                 "queries": len(queries), "held_out_queries": HELD_OUT, "k": K, "threads": 1,
                 "note": f"stores beyond {len(real) - HELD_OUT:,} vectors are jittered copies of the real ones "
                         f"(σ = {JITTER_SIGMA}, renormalised); queries are real embeddings never in the store"},
        "recall_target": RECALL_TARGET, "builds": [list(b) for b in builds], "expansions": list(expansions),
        "sizes": {}}
    for size in sizes:
        report["sizes"][str(size)] = bench_size(size, real, np.ascontiguousarray(queries), methods, builds, expansions)
    if "--no-wheels" not in argv:
        try:
            report["wheels"] = wheel_availability("--check-wheels" in argv)
        except (OSError, subprocess.SubprocessError) as exc:
            report["wheels"] = {"checked": f"not checked: {exc}"}
    return report


def int_option(argv: list[str], name: str, default: int) -> int:
    from bench.bench_search import option

    return int(option(argv, name) or default)


def option_list(argv: list[str], name: str) -> tuple[str, ...]:
    from bench.bench_search import option

    given = option(argv, name)
    return tuple(given.split(",")) if given else ()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(run_child(json.loads(sys.argv[2]))))
    else:
        print(json.dumps(main(sys.argv[1:]), indent=2))
