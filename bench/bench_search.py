"""Search by meaning and search on every surface (issue 12), all against baselines measured in the same run:

1. Embedding throughput: rows/s of `embedder.shared().embed(batch)` on one thread, batches of 32 realistic
   observation texts (title, subtitle, narrative: what the worker embeds).
2. Backfill: `semantic.embed_missing(conn, 32)` in a loop until it returns 0 over a fresh store of 10k
   observations (the worker's EmbeddingService does exactly this, one batch at a time).
3. Search in process at 10k observations with vectors, over the standard query set: hybrid, keyword and
   semantic p50/p95, interleaved with the bare FTS5 top-20 query; a search by meaning embeds its query (the
   kept embeddings of earlier queries are dropped first), and hybrid is also timed with the embedding kept,
   as when paging. Budget: hybrid p50 ≤ 10 ms.
4. Keyword search over HTTP: a real worker on that store, `GET /api/search?mode=keyword` on a kept-alive
   connection, interleaved with the bare FTS5 query in process. Budget: p50 ≤ 2.5× bare FTS5.
5. The MCP `search` tool (keyword) through the official SDK client over stdio against `claude-mem mcp`,
   interleaved likewise. Budget: p50 ≤ 2.5× bare FTS5.
6. The worker's resident memory once it has loaded the model (hybrid searches over HTTP). Budget ≤ 350 MB.

`python -m bench search [--quick] [--size N]` (quick: 2k observations; `--size` sets the count).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from bench.bench_recall import QUERIES, generate, percentile
from claude_mem import project as projects
from claude_mem.index import embedder, fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.runtime import discovery
from claude_mem.store import db, vectors

HYBRID_P50_BUDGET_MS = 10.0
SURFACE_RATIO_BUDGET = 2.5  # HTTP and MCP keyword search p50 against the bare FTS5 top-20 p50
MEMORY_BUDGET_MB = 350
BATCH = 32  # what the worker's EmbeddingService passes to embed_missing
LIMIT = 20
BARE_SQL = ("SELECT rowid, bm25(observations_fts) AS s FROM observations_fts WHERE observations_fts MATCH ?"
            " ORDER BY s LIMIT 20")  # bench_recall.bench_search's bare query
WORKER_START_S = 60.0


def progress(message: str) -> None:
    print(f"  search: {message}", file=sys.stderr, flush=True)


def timed_ms(call: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    call(*args)
    return (time.perf_counter() - start) * 1000


def figures(times: list[float], bare: list[float]) -> dict[str, float]:
    """p50/p95 of `times`, and the p50's ratio to the bare FTS5 p50 measured alongside."""
    p50, bare_p50 = statistics.median(times), statistics.median(bare)
    return {"p50_ms": round(p50, 3), "p95_ms": round(percentile(times, 0.95), 3),
            "ratio_to_bare_fts5": round(p50 / bare_p50, 2)}


def bare_fts5(conn: Any, query: str) -> Callable[[], object]:
    expression = fts.match_expression(query)
    return lambda: conn.execute(BARE_SQL, (expression,)).fetchall()


def observation_texts(conn: Any, count: int) -> list[str]:
    """The text the worker embeds for an observation (vectors._TEXTS), newest first."""
    return [text for (text,) in conn.execute(
        "SELECT title || char(10) || coalesce(subtitle, '') || char(10) || narrative FROM observations"
        " ORDER BY id DESC LIMIT ?", (count,))]


def bench_throughput(conn: Any, batches: int) -> dict[str, Any]:
    started = time.perf_counter()
    model = embedder.shared()
    load_s = time.perf_counter() - started
    texts = observation_texts(conn, BATCH * (batches + 1))
    model.embed(texts[:BATCH])  # warm: first-run allocations in onnxruntime
    times = [timed_ms(model.embed, texts[BATCH * (n + 1):BATCH * (n + 2)]) for n in range(batches)]
    rows = BATCH * batches
    tokens = [len(model.tokenizer.encode(text).ids) for text in texts[BATCH:]]
    return {"model": embedder.MODEL, "model_load_s": round(load_s, 3), "batch": BATCH, "batches": batches,
            "rows_per_s": round(rows / (sum(times) / 1000), 1), "batch_p50_ms": round(statistics.median(times), 1),
            "median_tokens_per_text": statistics.median(tokens)}


def bench_backfill(conn: Any) -> dict[str, Any]:
    from claude_mem.index.semantic import embed_missing

    before = vectors.progress(conn, embedder.MODEL)
    rows, calls = 0, 0
    started = time.perf_counter()
    while True:
        done = embed_missing(conn, BATCH)
        calls += 1
        if not done:
            break
        rows += done
    seconds = time.perf_counter() - started
    after = vectors.progress(conn, embedder.MODEL)
    return {"rows": rows, "seconds": round(seconds, 2), "rows_per_s": round(rows / seconds, 1), "calls": calls,
            "embedded_before": before["embedded"], "embedded_after": after["embedded"], "total": after["total"]}


def forget_query_embeddings() -> None:
    """Make the next search by meaning embed its query anew, as a query not asked before does: `semantic`
    keeps recent query embeddings (for paging), which would leave the model out of a repeated query's time."""
    from claude_mem.index import semantic

    kept = getattr(semantic, "_query_vector", None)
    if kept is not None and hasattr(kept, "cache_clear"):
        kept.cache_clear()


def bench_in_process(conn: Any, project: str, queries: list[str], rounds: int) -> dict[str, Any]:
    """Each mode and the bare FTS5 query, interleaved query by query. `hybrid` and `semantic` embed each
    query (a new search); `hybrid_repeated_query` is hybrid with the query's embedding kept (the next page)."""
    modes = ("hybrid", "keyword", "semantic")
    built = {(mode, query): SearchQuery.build(query, project=project, limit=LIMIT, mode=mode)
             for mode in modes for query in queries}
    totals: dict[str, list[int]] = {mode: [] for mode in modes}
    for (mode, _query), wanted in built.items():  # warm, and what each mode finds
        totals[mode].append(search(conn, wanted).total)
    times: dict[str, list[float]] = {mode: [] for mode in (*modes, "hybrid_repeated_query")}
    bare: list[float] = []
    for _ in range(rounds):
        for query in queries:
            bare.append(timed_ms(bare_fts5(conn, query)))
            for mode in modes:
                if mode != "keyword":
                    forget_query_embeddings()
                times[mode].append(timed_ms(search, conn, built[(mode, query)]))
            times["hybrid_repeated_query"].append(timed_ms(search, conn, built[("hybrid", query)]))
    report: dict[str, Any] = {mode: figures(values, bare) for mode, values in times.items()}
    for mode in modes:
        report[mode]["median_total"] = statistics.median(totals[mode])
    report.update({"bare_fts5_top20_p50_ms": round(statistics.median(bare), 3), "queries": len(queries),
                   "rounds": rounds})
    return report


def start_worker(data_dir: str) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false",
           "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "claude_mem.worker"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + WORKER_START_S
    while time.monotonic() < deadline:
        info = discovery.read_info(data_dir)
        if info and info["pid"] == proc.pid:
            return proc, int(info["port"])
        if proc.poll() is not None:
            raise RuntimeError(f"the worker exited with {proc.returncode} before it answered")
        time.sleep(0.05)
    stop_worker(proc)
    raise RuntimeError(f"the worker did not publish worker.json within {WORKER_START_S:.0f} s")


def stop_worker(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def rss_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of `pid`, in MB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = round(int(value.split()[0]) / 1024, 1)  # kB
    return found


class Api:
    """GETs on one kept-alive HTTP/1.1 connection to the worker."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Host": f"127.0.0.1:{port}", "Connection": "keep-alive"}

    def get(self, path: str, **params: object) -> dict[str, Any]:
        self.conn.request("GET", f"{path}?{urlencode(params)}", headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:200]!r}")
        return json.loads(body)

    def close(self) -> None:
        self.conn.close()


def bench_http(api: Api, conn: Any, project: str, queries: list[str], rounds: int) -> dict[str, Any]:
    """Keyword search over HTTP against the bare FTS5 query in process, interleaved."""
    def request(query: str) -> dict[str, Any]:
        return api.get("/api/search", q=query, mode="keyword", limit=LIMIT, project=project)

    mismatched = 0
    for query in queries:  # warm, and the same answer as in process
        expected = search(conn, SearchQuery.build(query, project=project, limit=LIMIT, mode="keyword"))
        found = request(query)
        mismatched += found["total"] != expected.total or [item["id"] for item in found["items"]] != [
            item["id"] for item in expected.items]
    times, bare = [], []
    for _ in range(rounds):
        for query in queries:
            bare.append(timed_ms(bare_fts5(conn, query)))
            times.append(timed_ms(request, query))
    return {**figures(times, bare), "bare_fts5_top20_p50_ms": round(statistics.median(bare), 3),
            "queries_differing_from_in_process": mismatched, "queries": len(queries), "rounds": rounds}


def bench_http_hybrid(api: Api, project: str, queries: list[str]) -> dict[str, Any]:
    """The first hybrid search loads the worker's model; then one pass over the query set (each query new to
    the worker, so each is embedded)."""
    def request(query: str) -> dict[str, Any]:
        return api.get("/api/search", q=query, mode="hybrid", limit=LIMIT, project=project)

    first_ms = timed_ms(request, "model warm-up")
    times = [timed_ms(request, query) for query in queries]
    return {"first_request_ms": round(first_ms, 1), "p50_ms": round(statistics.median(times), 3),
            "p95_ms": round(percentile(times, 0.95), 3), "queries": len(queries)}


def mcp_command() -> tuple[str, list[str]]:
    entry = os.path.join(os.path.dirname(sys.executable), "claude-mem")
    return (entry, ["mcp"]) if os.path.exists(entry) else (sys.executable, ["-m", "claude_mem", "mcp"])


async def mcp_session(data_dir: str, project: str, conn: Any, queries: list[str], rounds: int) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command, args = mcp_command()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "CLAUDE_MEM_DATA_DIR": data_dir}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=project)
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            start_ms = (time.perf_counter() - started) * 1000

            async def call(query: str) -> str:
                result = await session.call_tool("search", {"query": query, "mode": "keyword"})
                text = result.content[0].text if result.content and result.content[0].type == "text" else ""
                if result.is_error:
                    raise RuntimeError(f"the MCP search tool failed: {text[:200]}")
                return text

            with_hits = 0
            for query in queries:  # warm, and each query finds something in this project
                with_hits += (await call(query)).startswith("Search ")
            times, bare = [], []
            for _ in range(rounds):
                for query in queries:
                    bare.append(timed_ms(bare_fts5(conn, query)))
                    start = time.perf_counter()
                    await call(query)
                    times.append((time.perf_counter() - start) * 1000)
    return {**figures(times, bare), "bare_fts5_top20_p50_ms": round(statistics.median(bare), 3),
            "server_start_ms": round(start_ms, 1), "queries_with_hits": with_hits, "queries": len(queries),
            "rounds": rounds}


def option(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str]) -> dict[str, object]:
    reason = embedder.unavailable()
    if reason:
        return {"unavailable": reason}
    quick = "--quick" in argv
    size = int(option(argv, "--size") or (2_000 if quick else 10_000))
    rounds = 1 if quick else 5  # of the query set, over HTTP and MCP
    with open(QUERIES, encoding="utf-8") as handle:
        queries = [line.strip() for line in handle if line.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        os.makedirs(os.path.join(tmp, "proj", ".git"))
        project = projects.project_root(os.path.join(tmp, "proj"))
        data_dir = os.path.join(tmp, "data")
        conn = db.connect(db.db_path(data_dir))
        try:
            generate(conn, project, size)
            conn.execute("PRAGMA optimize")
            progress(f"{size:,} observations generated; embedding throughput …")
            throughput = bench_throughput(conn, max(1, min(size // BATCH - 1, 4 if quick else 8)))
            progress(f"{throughput['rows_per_s']} rows/s; backfilling {size:,} observations …")
            backfill = bench_backfill(conn)
            progress(f"backfill {backfill['seconds']} s; search in process …")
            in_process = bench_in_process(conn, project, queries, 2 if quick else 3)
            progress("search over HTTP (a real worker) …")
            proc, port = start_worker(data_dir)
            api = Api(port)
            try:
                http_keyword = bench_http(api, conn, project, queries, rounds)
                before_model = rss_mb(proc.pid)
                http_hybrid = bench_http_hybrid(api, project, queries)
                loaded = rss_mb(proc.pid)
            finally:
                api.close()
                stop_worker(proc)
            progress("search over MCP stdio …")
            mcp_keyword = asyncio.run(asyncio.wait_for(mcp_session(data_dir, project, conn, queries, rounds), 300))
        finally:
            conn.close()
    memory = {"rss_mb": loaded["VmRSS"], "peak_rss_mb": loaded["VmHWM"], "rss_before_model_mb": before_model["VmRSS"],
              "budget_mb": MEMORY_BUDGET_MB}
    hybrid: Any = in_process["hybrid"]
    return {
        "observations": size,
        "budgets": {"hybrid_p50_ms": HYBRID_P50_BUDGET_MS, "surface_ratio_to_bare_fts5": SURFACE_RATIO_BUDGET,
                    "worker_rss_mb": MEMORY_BUDGET_MB},
        "throughput": throughput, "backfill": backfill, "in_process": in_process, "http_keyword": http_keyword,
        "http_hybrid": http_hybrid, "worker_memory": memory, "mcp_keyword": mcp_keyword,
        "within_budget": {
            "hybrid_p50": hybrid["p50_ms"] <= HYBRID_P50_BUDGET_MS,
            "http_keyword": http_keyword["ratio_to_bare_fts5"] <= SURFACE_RATIO_BUDGET,
            "mcp_keyword": mcp_keyword["ratio_to_bare_fts5"] <= SURFACE_RATIO_BUDGET,
            "worker_rss": memory["rss_mb"] <= MEMORY_BUDGET_MB,
        },
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
