"""`python -m bench vectors [--quick] [--sizes 10k,100k,1m] [--backfill-seconds N]`: search by meaning at scale
(issue 28, item 6), each figure beside its baseline measured in the same run.

1. **Bytes**: the database's bytes per observation with and without vectors, beside the original claude-mem's
   database at the same size (bench_import_claude_mem's generator: the original's exact schema, 100
   observations, 5 prompts and 5 summaries to a session), ours made by importing it (`claude-mem import
   claude-mem`), then given a vector for every observation, summary and prompt through the store (what the
   worker's backfill leaves), the WAL checkpointed. Target: ≤ 1.5× the original's at 100k.
2. **Worker search**: a store of generated observations (bench_recall's generator), a vector for each saved
   through the store, two real workers over copies of it — `CLAUDE_MEM_VECTOR_INDEX=exact` (brute force: the
   baseline) and the default (`auto`) — asked `GET /api/search?mode=hybrid` over the standard query set,
   interleaved query by query, each query new to both (its embedding not kept): p50/p95 and the ratio to
   exact, the `mode` / `degraded` / `unembedded` the answers carried, how much of exact search's page the
   default index's page holds (overlap@20), the index `/health` names, each worker's RSS; and hybrid's
   halves (`mode=keyword`, `mode=semantic`) timed alone by the default index's worker. Targets: p50 ≤ 10
   ms at 100k, ≤ 30 ms at 1M. Beside the wall times, the worker's CPU time per request (every thread, from
   schedstat): what a busy machine leaves comparable. Then, in process, the backfill's batch query (which
   rows to embed next) while 320 new observations are embedded, and once when nothing is left: its longest
   time (target ≤ 5 ms at 1M).
3. **Backfill**: a real worker embedding a fresh store from zero (real model) for N seconds (quick 20, else
   60): rows/s from `/health` once the first batch is stored (target ≥ 100), its RSS and peak.

Vectors: the real model's embeddings of generated observation texts (bench_ann's cached sample) and, past
that sample, jittered copies of them (noise σ = 0.02, renormalised): a cosine costs the same whatever the
vector, and the timing does not need every row embedded by the model (embedding 1M rows takes hours here).
Sizes: quick 10k (bytes at 10k); default 10k and 100k; `--sizes` for others (1M only when asked).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from bench.bench_ann import jittered_store, real_sample, sizes_option
from bench.bench_import_claude_mem import generate as generate_original
from bench.bench_import_claude_mem import import_into
from bench.bench_recall import QUERIES, generate, percentile
from bench.bench_search import Api, generated_store, option, process_cpu_ms, rss_mb, start_worker, stop_worker
from claude_mem.index import embedder
from claude_mem.store import context_field, db, vectors

SIZES = (10_000, 100_000)
QUICK_SIZES = (10_000,)
BYTES_MAX_SIZE = 100_000  # bytes are measured at the sizes up to this one
HYBRID_P50_BUDGETS_MS = {100_000: 10.0, 1_000_000: 30.0}
BYTES_RATIO_BUDGET = 1.5  # ours with vectors / the original's, at 100k
BACKFILL_BUDGET_ROWS_S = 100.0
BATCH_QUERY_BUDGET_MS = 5.0  # at 1M
RSS_BUDGET_MB = 300.0
BATCH = 32
NEW_ROWS = 320  # observations added to a full store to time the backfill's batch query
LIMIT = 20
SAVE_CHUNK = 20_000
READY_TIMEOUT_S = 3_600.0
ROUND_SUFFIXES = ("", " notes", " issue")  # a query text new to the worker each round (no kept embedding)
PARTS = ("keyword", "semantic")  # hybrid's halves, timed alone by the default index's worker


def progress(message: str) -> None:
    print(f"  vectors: {message}", file=sys.stderr, flush=True)


def layout(conn: Any) -> str:
    """How this checkout stores vectors: the `vectors` table's definition, shortened."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vectors'").fetchone()
    text = " ".join((sql[0] if sql else "none").split())
    return text if len(text) < 160 else text[:157] + "…"


def save_vectors(conn: Any, keys: list[tuple[str, int]], matrix: Any) -> None:
    """Through the store: `semantic.store_vectors` (quantised, m016) where this checkout has it, else float32."""
    from claude_mem.index import semantic

    store = getattr(semantic, "store_vectors", None)
    if store is not None:
        store(conn, keys, matrix)
    else:
        vectors.save(conn, embedder.MODEL, [(kind, row_id, matrix[n].tobytes()) for n, (kind, row_id) in enumerate(keys)])


def embed_everything(conn: Any, real: Any, kinds: tuple[str, ...] = ("observation", "summary", "prompt")) -> int:
    """Give every row of `kinds` a vector (jittered copies of the real sample), in chunks; returns how many."""
    tables = {"observation": "observations", "summary": "summaries", "prompt": "prompts"}
    keys = [(kind, row_id) for kind in kinds for (row_id,) in conn.execute(f"SELECT id FROM {tables[kind]} ORDER BY id")]
    matrix = jittered_store(real, len(keys), seed=11)
    for start in range(0, len(keys), SAVE_CHUNK):
        save_vectors(conn, keys[start:start + SAVE_CHUNK], matrix[start:start + SAVE_CHUNK])
    return len(keys)


def file_bytes(path: str) -> int:
    """The database's bytes once its WAL is checkpointed into it."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return os.path.getsize(path)


def bench_bytes(size: int, real: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-vectors-bytes-") as tmp:
        theirs = os.path.join(tmp, "claude-mem.db")
        generate_original(theirs, size)
        data_dir = os.path.join(tmp, "ours")
        import_into(data_dir, theirs)
        path = db.db_path(data_dir)
        settled = db.connect(path)
        try:  # every row's search context as the worker leaves it (issue 29: the rows after each one)
            context_field.settle(settled)
        finally:
            settled.close()
        without = file_bytes(path)
        conn = db.connect(path)
        try:
            count = embed_everything(conn, real)
            table = layout(conn)
        finally:
            conn.close()
        with_vectors = file_bytes(path)
        original = os.path.getsize(theirs)
    per = {"original": original / size, "ours_without_vectors": without / size, "ours_with_vectors": with_vectors / size}
    return {"observations": size, "vectors": count, "layout": table,
            "bytes_per_observation": {name: round(value) for name, value in per.items()},
            "mb": {"original": round(original / 2**20, 1), "ours_without_vectors": round(without / 2**20, 1),
                   "ours_with_vectors": round(with_vectors / 2**20, 1)},
            "ratio_with_vectors": round(per["ours_with_vectors"] / per["original"], 2),
            "ratio_without_vectors": round(per["ours_without_vectors"] / per["original"], 2),
            "vector_bytes_each": round((with_vectors - without) / count)}


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """`os.environ` with `values` set (start_worker passes this process's environment on)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def hybrid(api: Api, project: str, text: str, mode: str = "hybrid") -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    answer = api.get("/api/search", q=text, mode=mode, limit=LIMIT, project=project)
    return (time.perf_counter() - start) * 1000, answer


def wait_ready(api: Api, port: int, project: str) -> tuple[float, dict[str, Any]]:
    """Seconds until the worker answers a search by meaning as such, not degraded, with no index being built;
    and the index `/health` then names."""
    started = time.perf_counter()
    while True:
        _ms, answer = hybrid(api, project, "worker warm-up")
        index = health_vectors(port).get("index") or {}
        if not answer.get("degraded") and answer.get("mode", "hybrid") != "keyword" and not index.get("building"):
            return time.perf_counter() - started, index
        if time.perf_counter() - started > READY_TIMEOUT_S:
            raise RuntimeError(f"the worker is not ready after {READY_TIMEOUT_S:.0f} s: {answer.get('note')}, {index}")
        time.sleep(1)


def bench_search(size: int, real: Any, queries: list[str], rounds: int) -> dict[str, Any]:
    """Hybrid search over HTTP by two workers (exact, auto) over copies of one store, interleaved query by query."""
    with generated_store(size) as (data_dir, project, conn), tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp:
        progress(f"{size:,} observations generated; saving a vector for each …")
        started = time.perf_counter()
        embed_everything(conn, real, ("observation", "summary"))
        save_s = time.perf_counter() - started
        dirs = {"exact": data_dir, "auto": tmp}
        file_bytes(db.db_path(data_dir))
        # a copy through SQLite: `shutil.copy` would open and close the file in this process, and closing any
        # descriptor of a database drops every POSIX lock this process holds on it (`conn`'s), so a worker
        # writing at once (the context service) could corrupt it
        conn.execute("VACUUM INTO ?", (db.db_path(tmp),))
        workers: dict[str, Any] = {}
        apis: dict[str, Api] = {}
        try:
            ready: dict[str, float] = {}
            held: dict[str, dict[str, Any]] = {}
            for way in ("exact", "auto"):
                with environment(CLAUDE_MEM_VECTOR_INDEX=way):
                    workers[way] = start_worker(dirs[way])
                apis[way] = Api(workers[way][1])
                progress(f"{size:,} observations: {way} worker up; waiting for its first search by meaning …")
                ready[way], held[way] = wait_ready(apis[way], workers[way][1], project)
            for way, (_proc, port) in workers.items():  # anew: a kept-alive connection left idle was closed
                apis[way].close()
                apis[way] = Api(port)
                hybrid(apis[way], project, "connection warm-up")
            times: dict[str, list[float]] = {way: [] for way in apis}
            overlaps: list[float] = []
            parts: dict[str, list[float]] = {mode: [] for mode in PARTS}
            parts_cpu: dict[str, list[float]] = {mode: [] for mode in PARTS}
            cpu: dict[str, list[float]] = {way: [] for way in apis}
            seen: dict[str, dict[str, Any]] = {way: {"modes": set(), "degraded": 0, "unembedded_max": 0, "totals": []}
                                               for way in apis}
            for number in range(rounds):
                for query in queries:
                    answers: dict[str, list[int]] = {}
                    for way, api in apis.items():
                        before = process_cpu_ms(workers[way][0].pid)
                        elapsed, answer = hybrid(api, project, query + ROUND_SUFFIXES[number % len(ROUND_SUFFIXES)])
                        cpu[way].append(process_cpu_ms(workers[way][0].pid) - before)
                        times[way].append(elapsed)
                        seen[way]["modes"].add(answer.get("mode", "(not said)"))
                        seen[way]["degraded"] += bool(answer.get("degraded"))
                        seen[way]["unembedded_max"] = max(seen[way]["unembedded_max"], answer.get("unembedded") or 0)
                        seen[way]["totals"].append(answer["total"])
                        answers[way] = [item["id"] for item in answer["items"]]
                    text = query + ROUND_SUFFIXES[number % len(ROUND_SUFFIXES)] + " parts"
                    for mode in PARTS:  # hybrid's halves, by the default index's worker (each text new to it)
                        before = process_cpu_ms(workers["auto"][0].pid)
                        parts[mode].append(hybrid(apis["auto"], project, text, mode)[0])
                        parts_cpu[mode].append(process_cpu_ms(workers["auto"][0].pid) - before)
                    if answers["exact"]:  # the default index's page against exact search's page
                        overlaps.append(len(set(answers["auto"]) & set(answers["exact"])) / len(answers["exact"]))
            memory = {way: rss_mb(proc.pid) for way, (proc, _port) in workers.items()}
        finally:
            for api in apis.values():
                api.close()
            for proc, _port in workers.values():
                stop_worker(proc)
        batches = bench_batch_query(conn, project, real)
    exact_p50 = statistics.median(times["exact"])
    found: dict[str, Any] = {"observations": size, "save_vectors_s": round(save_s, 1), "queries": len(times["auto"]),
                             "batch_query": batches, "overlap_with_exact": round(statistics.fmean(overlaps), 4),
                             "parts": {mode: {"p50_ms": round(statistics.median(parts[mode]), 2),
                                              "cpu_p50_ms": round(statistics.median(parts_cpu[mode]), 2)} for mode in PARTS}}
    for way in apis:
        found[way] = {"p50_ms": round(statistics.median(times[way]), 2), "p95_ms": round(percentile(times[way], 0.95), 2),
                      "ratio_to_exact": round(statistics.median(times[way]) / exact_p50, 2),
                      "cpu_p50_ms": round(statistics.median(cpu[way]), 2),
                      "cpu_ratio_to_exact": round(statistics.median(cpu[way]) / statistics.median(cpu["exact"]), 2),
                      "ready_s": round(ready[way], 1), "index": held[way],
                      "rss_mb": memory[way]["VmRSS"], "peak_rss_mb": memory[way]["VmHWM"],
                      "modes": sorted(seen[way]["modes"]), "degraded_answers": seen[way]["degraded"],
                      "unembedded_max": seen[way]["unembedded_max"],
                      "median_total": statistics.median(seen[way]["totals"])}
    budget = HYBRID_P50_BUDGETS_MS.get(size)
    if budget is not None:
        found["budget_p50_ms"] = budget
    return found


def pick_batch(conn: Any) -> list[tuple[str, int, str]]:
    """The backfill's next batch: the queue (m016) where this checkout has it, else the rows without a vector."""
    queued = getattr(vectors, "queued", None)
    rows: list[tuple[str, int, str]] = queued(conn, BATCH) if queued else vectors.missing(conn, embedder.MODEL, BATCH)
    return rows


def bench_batch_query(conn: Any, project: str, real: Any) -> dict[str, Any]:
    """The backfill's pick of its next batch (`pick_batch`), timed in process while NEW_ROWS new
    observations get vectors (saved as the worker saves them), and once more when none is left."""
    generate(conn, project, NEW_ROWS, seed=9)
    picks, saves = [], []
    while True:
        started = time.perf_counter()
        rows = pick_batch(conn)
        picks.append((time.perf_counter() - started) * 1000)
        if not rows:
            break
        started = time.perf_counter()
        save_vectors(conn, [(kind, row_id) for kind, row_id, _text in rows], jittered_store(real, len(rows), seed=len(picks)))
        saves.append((time.perf_counter() - started) * 1000)
    return {"batches": len(saves), "pick_p50_ms": round(statistics.median(picks), 3), "pick_max_ms": round(max(picks), 3),
            "pick_when_none_left_ms": round(picks[-1], 3), "save_p50_ms": round(statistics.median(saves), 3) if saves else None,
            "budget_ms": BATCH_QUERY_BUDGET_MS}


def health_vectors(port: int) -> dict[str, Any]:
    """The worker's `/health` `vectors` (a connection each: the worker closes an idle kept-alive one)."""
    api = Api(port)
    try:
        found: dict[str, Any] = api.get("/health").get("vectors") or {}
    finally:
        api.close()
    return found


def bench_backfill(size: int, seconds: float) -> dict[str, Any]:
    """A real worker embedding a fresh store of `size` observations from zero, for `seconds` after its first batch."""
    with generated_store(size) as (data_dir, _project, _conn):
        proc, port = start_worker(data_dir)
        try:
            deadline = time.monotonic() + 300
            while (health_vectors(port).get("embedded") or 0) == 0:  # the model loads, the first batch is stored
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the worker embedded nothing in 300 s: {health_vectors(port)}")
                time.sleep(0.2)
            first = health_vectors(port)
            started = time.perf_counter()
            time.sleep(seconds)
            last = health_vectors(port)
            elapsed = time.perf_counter() - started
            memory = rss_mb(proc.pid)
        finally:
            stop_worker(proc)
    rows = int(last["embedded"]) - int(first["embedded"])
    return {"observations": size, "seconds": round(elapsed, 1), "rows": rows, "rows_per_s": round(rows / elapsed, 1),
            "embedded": last["embedded"], "total": last["total"], "rss_mb": memory["VmRSS"], "peak_rss_mb": memory["VmHWM"],
            "worker_rate": last.get("rate"), "eta_s": last.get("eta_s"), "budget_rows_per_s": BACKFILL_BUDGET_ROWS_S}


def main(argv: list[str]) -> dict[str, Any]:
    quick = "--quick" in argv
    reason = embedder.unavailable()
    if reason:
        return {"unavailable": reason}
    sizes = sizes_option(argv, QUICK_SIZES if quick else SIZES)
    seconds = float(option(argv, "--backfill-seconds") or (20 if quick else 60))
    with open(QUERIES, encoding="utf-8") as handle:
        queries = [line.strip() for line in handle if line.strip()]
    real = real_sample(1_000 if quick else 4_000)
    report: dict[str, Any] = {
        "data": f"synthetic observation text; vectors: {len(real):,} real MiniLM embeddings, past that jittered copies",
        "budgets": {"hybrid_p50_ms": {str(size): budget for size, budget in HYBRID_P50_BUDGETS_MS.items()},
                    "bytes_ratio_100k": BYTES_RATIO_BUDGET, "backfill_rows_per_s": BACKFILL_BUDGET_ROWS_S,
                    "batch_query_ms_1m": BATCH_QUERY_BUDGET_MS, "worker_rss_mb": RSS_BUDGET_MB},
        "bytes": {}, "search": {}}
    for size in sizes:
        if size <= BYTES_MAX_SIZE:
            progress(f"bytes per observation at {size:,} …")
            report["bytes"][str(size)] = bench_bytes(size, real)
    for size in sizes:
        report["search"][str(size)] = bench_search(size, real, queries, 1 if quick or size >= 1_000_000 else 2)
    progress(f"backfill from zero for {seconds:g} s …")
    report["backfill"] = bench_backfill(2_000 if quick else 10_000, seconds)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
