"""Recall benchmarks (DESIGN §11): session-start hook latency, FTS search latency, context size.

- `session-start` exactly as hooks.json runs it (`python3 -I -S scripts/hook.py session-start`)
  at 1k, 10k and 100k observations (100k not with `--quick`), against a bare `python -c pass` of the
  same interpreter, interleaved run by run; CPU time (the child's rusage) and wall. Budgets (issue
  27): ≤ 2.5× bare python at 10k; at 100k ≤ 1.3× its 1k figure (reads through indexes only).
- Search p50/p95 in process at 10k and 100k observations over the standard query set
  (`bench/bench-queries.txt`). Budget: p50 ≤ 5 ms at 100k.
- Context size in tokens (chars / 4) at 50 observations.
- The `user-prompt` hook with nothing relevant to add, at each of those sizes, with a worker running
  that holds a vector for every observation (hybrid): a new prompt every run (nothing cached), wall
  and CPU beside a bare `python -c pass`; budget ≤ 2.5× bare python (wall: the wait is the user's).
  Beside it, per-prompt memory off (the hook's own floor) and on with no worker (keyword search in
  the hook). The 1k store's vectors are real embeddings; bigger stores repeat them (embedding 100k
  rows takes ~50 min here; a cosine costs the same whatever the vector).
- `claude-mem statusline` at 10k observations, as a status bar runs it (`python3 -I -S
  scripts/statusline.py`), beside a bare `python -c pass`. Budget: ≤ 50 ms (issue 13).

Data: observations whose words are drawn from a Zipf-distributed vocabulary of real programming
terms. `python -m bench recall` or `python bench/bench_recall.py [--quick]`.
"""

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

from claude_mem import settings
from claude_mem.index import fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.recall import context
from claude_mem.store import db

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
QUERIES = os.path.join(HERE, "bench-queries.txt")
SESSION_START_GROWTH_BUDGET = 1.3  # 100k / 1k
SESSION_START_RATIO_BUDGET = 2.5  # × bare python at 10k
PROMPT_RATIO_BUDGET = 2.5  # × bare python, nothing relevant, every size
STATUSLINE_BUDGET_MS = 50.0
SEARCH_P50_BUDGET_MS = 5.0
VOCABULARY = """
cache auth parser router database scheduler logger config websocket migration tokenizer renderer queue
worker session billing indexer upload payment notification metrics storage compiler linter request
response handler middleware endpoint schema query index transaction lock timeout retry backoff lease
thread process async await future promise callback event stream buffer socket connection pool client
server proxy gateway token secret credential permission role user account profile email password hash
salt encryption certificate tls http json yaml toml xml csv payload header cookie cors csrf redirect
template component state store reducer action hook effect context provider props render layout style
theme font image asset bundle webpack vite rollup babel typescript python rust golang java kotlin swift
test fixture mock stub assertion coverage benchmark profiler trace span log warning error exception panic
crash deadlock race condition leak memory null pointer overflow underflow stale entry invalidation
eviction ttl hit miss shard replica partition leader follower consensus raft quorum snapshot backup
restore checkpoint wal journal vacuum pragma sqlite postgres redis kafka rabbitmq grpc protobuf graphql
rest api version deprecation feature flag rollout canary deploy release build pipeline ci docker image
container kubernetes pod node cluster namespace volume secret configmap ingress service mesh sidecar
retry idempotency dedup ordering offset cursor pagination sort filter search ranking bm25 embedding vector
model prompt completion observer summary observation memory context budget hook plugin worker daemon
signal shutdown restart health probe port bind host origin header upload download chunk stream compress
gzip zstd encode decode unicode utf8 escape sanitize validate parse serialize migrate rollback upgrade
""".split()


# Real observation text is prose: about half its tokens are function words, which rank highest.
FUNCTION_WORDS = """the a to of and in is for that on with when it as by from not was are this be or at
after before so but if into an which now then only also because while""".split()


def zipf_sampler(rng: random.Random, exponent: float = 1.1):
    """Words drawn with frequency ∝ 1 / rank^exponent: function words first, then shuffled terms."""
    terms = list(dict.fromkeys(VOCABULARY))
    rng.shuffle(terms)
    words = FUNCTION_WORDS + terms
    weights = [1 / (rank ** exponent) for rank in range(1, len(words) + 1)]

    def draw(count: int) -> list[str]:
        return rng.choices(words, weights=weights, k=count)

    return draw


def generate(conn, project: str, count: int, seed: int = 1) -> None:
    """`count` observations over the last `count` hours, in one transaction."""
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    types = ("bugfix", "feature", "refactor", "change", "discovery", "decision")
    now = datetime.now(UTC)
    conn.execute("BEGIN IMMEDIATE")
    session = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES (?, ?)",
                           (f"bench-{project}-{count}", project)).lastrowid

    def rows():
        for n in range(count):
            title = " ".join(draw(rng.randint(6, 12))).capitalize()
            narrative = " ".join(draw(rng.randint(25, 60))) + "."
            when = (now - timedelta(hours=count - n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            yield (session, project, rng.choice(types), title, narrative, json.dumps(draw(3)),
                   json.dumps(draw(2)), json.dumps([f"src/{w}.py" for w in draw(2)]), f"h{n}", when)

    conn.executemany(
        "INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, files_read,"
        " content_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
    conn.execute(
        "INSERT INTO summaries (session_id, project, request, learned, completed, next_steps) VALUES (?, ?, ?, ?, ?, ?)",
        (session, project, " ".join(draw(12)), " ".join(draw(20)), " ".join(draw(15)), " ".join(draw(12))))
    conn.execute("COMMIT")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def run_ms(argv: list[str], env: dict, stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=60, check=True)
    return (time.perf_counter() - start) * 1000


def interleaved(commands: dict[str, tuple[list[str], object]], env: dict, runs: int, warm: int = 2) -> dict:
    """Each command run `runs` times, one after the other in turn (noise hits all alike), after `warm`
    unmeasured rounds: median CPU (the child's own rusage) and wall ms per command, and its stdout of
    the last run. A command's stdin is bytes, or a function of the run number giving them."""
    from bench.plugin_hooks import run_measured

    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    out: dict[str, bytes] = {}
    for n in range(runs + warm):
        for name, (argv, stdin) in commands.items():
            done = run_measured(argv, stdin(n) if callable(stdin) else stdin, env)
            if done.returncode != 0:
                raise RuntimeError(f"{name} exited {done.returncode}: {done.stderr[-300:]!r}")
            if n >= warm:
                cpu[name].append(done.cpu_s * 1000)
                wall[name].append(done.wall_s * 1000)
                out[name] = done.stdout
    return {name: {"cpu_ms": round(statistics.median(cpu[name]), 2), "wall_ms": round(statistics.median(wall[name]), 2),
                   "wall_p95_ms": round(percentile(wall[name], 0.95), 2), "stdout": out[name]} for name in commands}


def bench_hook(data_dir: str, project: str, runs: int) -> dict:
    """The session-start hook as hooks.json runs it, beside a bare `python -c pass`, interleaved."""
    from bench.plugin_hooks import plugin_command

    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    env.pop("CLAUDE_PROJECT_DIR", None)

    def payload(n: int) -> bytes:
        return json.dumps({"session_id": f"bench-session-{n}", "transcript_path": "/tmp/t.jsonl", "cwd": project,
                           "hook_event_name": "SessionStart", "source": "startup"}).encode()

    got = interleaved({"hook": (plugin_command("session-start"), payload), "bare": ([sys.executable, "-c", "pass"], b"")},
                      env, runs)
    text = json.loads(got["hook"]["stdout"])["hookSpecificOutput"]["additionalContext"]
    shown = sum(1 for line in text.splitlines() if line[:1] == "#" and line[1:2].isdigit())
    hook, bare = got["hook"], got["bare"]
    return {"hook_cpu_ms": hook["cpu_ms"], "bare_python_cpu_ms": bare["cpu_ms"],
            "ratio_to_bare": round(hook["cpu_ms"] / bare["cpu_ms"], 2),
            "hook_p50_ms": hook["wall_ms"], "hook_p95_ms": hook["wall_p95_ms"], "bare_python_p50_ms": bare["wall_ms"],
            "wall_ratio_to_bare": round(hook["wall_ms"] / bare["wall_ms"], 2), "rows_injected": shown, "runs": runs}


# Nothing in the bench store is relevant to it (no memory is added, `memories_added_last_prompt`; its best
# cosine to the 1k store is 0.36, under `prompt_context.MIN_COSINE`), though its words are found in ~40% of
# the observations; each run asks it anew (`prompt_text`).
PROMPT = "can you draft the release notes email for the team about the new theme and font"


def prompt_text(n: int) -> str:
    """A new prompt each run (the worker keeps the embeddings of prompts it saw)."""
    return f"{PROMPT} (draft {n})"


def seed_vectors(conn, source: list[bytes] | None) -> list[bytes]:
    """A vector for every observation (and summary): real embeddings when `source` is None, else
    `source` (int8 vectors) repeated over the rows; returns the observation vectors (by
    id) for the next store."""
    from claude_mem.index import embedder
    from claude_mem.index.semantic import embed_missing
    from claude_mem.store import vectors

    if source is None:
        while embed_missing(conn, 64):
            pass
    else:
        ids = [row[0] for row in conn.execute("SELECT id FROM observations ORDER BY id")]
        vectors.save(conn, embedder.MODEL, [("observation", row_id, source[n % len(source)]) for n, row_id in enumerate(ids)])
        while embed_missing(conn, 64):  # the summary
            pass
    return [row[0] for row in conn.execute(
        "SELECT vector FROM vectors WHERE kind = 0 ORDER BY row_id")]


def bench_prompt_hook(data_dir: str, project: str, runs: int, with_worker: bool) -> dict:
    """The user-prompt hook as hooks.json runs it, nothing relevant to add: memory off, on with no worker
    (keyword search in the hook) and, with `with_worker`, on with a worker running (hybrid), each beside a
    bare `python -c pass`, interleaved."""
    from bench.plugin_hooks import plugin_command

    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false",
           "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    hook, bare = plugin_command("user-prompt"), ([sys.executable, "-c", "pass"], b"")

    def payload(way: str):
        def make(n: int) -> bytes:  # a new session each time: nothing counts as already shown
            return json.dumps({"session_id": f"bench-prompt-{way}-{n}", "transcript_path": "/tmp/t.jsonl",
                               "cwd": project, "hook_event_name": "UserPromptSubmit", "prompt": prompt_text(n)}).encode()
        return make

    def measure(way: str, extra: dict) -> dict:
        got = interleaved({"hook": (hook, payload(way)), "bare": bare}, {**env, **extra}, runs)
        figures = {"cpu_ms": got["hook"]["cpu_ms"], "p50_ms": got["hook"]["wall_ms"], "p95_ms": got["hook"]["wall_p95_ms"],
                   "bare_python_cpu_ms": got["bare"]["cpu_ms"], "bare_python_p50_ms": got["bare"]["wall_ms"],
                   "ratio_to_bare": round(got["hook"]["wall_ms"] / got["bare"]["wall_ms"], 2),
                   "cpu_ratio_to_bare": round(got["hook"]["cpu_ms"] / got["bare"]["cpu_ms"], 2),
                   "memories_added_last_prompt": got["hook"]["stdout"].count(b"\\n#")}
        return figures

    report: dict[str, object] = {"runs": runs, "prompt": prompt_text(0)}
    report["off"] = measure("off", {"CLAUDE_MEM_PROMPT_CONTEXT": "false"})
    report["keyword_in_hook"] = measure("keyword", {})
    if not with_worker:
        return report
    if "hybrid" not in available_modes():
        report["worker_hybrid"] = "the search extra is not installed"
        return report
    subprocess.run([sys.executable, "-m", "claude_mem", "worker", "start"], env=env, capture_output=True, timeout=120)
    try:
        report["worker_settled_s"] = settle_worker(data_dir, project)
        report["worker_hybrid"] = measure("worker", {})
        report["related_route"] = related_route(data_dir, project, runs)
    finally:
        subprocess.run([sys.executable, "-m", "claude_mem", "worker", "stop"], env=env, capture_output=True, timeout=120)
    return report


def settle_worker(data_dir: str, project: str, limit_s: float = 300) -> float:
    """Wait until a just-started worker runs as it does for hours: every row embedded (the prompts the
    runs before stored) and every row's search context current (the generator stores all its rows at once,
    so the worker has each one's next neighbours to add: issue 29), its vectors and model loaded (one
    answer). Returns the seconds it took."""
    from claude_mem.runtime import discovery

    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        info = discovery.read_info(data_dir) or {}
        health = discovery.request_json(info["port"], "GET", "/health", None, 30) if info.get("port") else None
        progress = (health or {}).get("vectors") or {}
        context = (health or {}).get("keyword_index") or {"waiting": 0, "queued": 0}
        if progress.get("total") and progress.get("embedded") == progress.get("total") \
                and context.get("waiting") == 0 and context.get("queued") == 0:
            body = {"prompt": "warm up", "project": project, "session": "", "limit": 3}
            discovery.request_json(info["port"], "POST", "/api/related", body, 60)
            break
        time.sleep(0.5)
    return round(time.perf_counter() - started, 1)


def related_route(data_dir: str, project: str, runs: int) -> dict:
    """The worker's answer alone (`POST /api/related`, what the hook waits for), new prompts with nothing
    relevant, none stored (so the worker has no new row to embed meanwhile): p50 and p95 ms."""
    from claude_mem.runtime import discovery

    port = (discovery.read_info(data_dir) or {}).get("port")
    times, items = [], 0
    for n in range(runs + 2):
        body = {"prompt": prompt_text(10_000 + n), "project": project, "session": "", "limit": 3}
        start = time.perf_counter()
        answer = discovery.request_json(port, "POST", "/api/related", body, 30) if port else None
        if n >= 2 and answer is not None:
            times.append((time.perf_counter() - start) * 1000)
            items += len(answer.get("items") or [])
    if not times:
        return {"error": "no worker answered"}
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(percentile(times, 0.95), 2),
            "answers": len(times), "items": items}


def bench_statusline(data_dir: str, project: str, runs: int) -> dict:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}
    command = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "statusline.py")]
    payload = json.dumps({"session_id": "s", "cwd": project, "workspace": {"current_dir": project}}).encode()
    line = subprocess.run(command, input=payload, env=env, capture_output=True, timeout=60, check=True).stdout.decode()
    times, bare_times = [], []
    for _ in range(runs):
        bare_times.append(run_ms([sys.executable, "-c", "pass"], env))
        times.append(run_ms(command, env, payload))
    p50, bare_p50 = statistics.median(times), statistics.median(bare_times)
    return {"p50_ms": round(p50, 2), "bare_python_p50_ms": round(bare_p50, 2), "ratio_to_bare": round(p50 / bare_p50, 2),
            "line": line.strip(), "runs": runs, "budget_ms": STATUSLINE_BUDGET_MS}


def bench_search(conn, project: str, queries: list[str], rounds: int) -> dict:
    """Our search against the bare FTS5 query it builds on (top 20 by bm25), interleaved."""
    times, bare_times = [], []
    observations = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    matched = []
    for query in queries:
        found = search(conn, SearchQuery.build(query, project=project, limit=20))  # also warms
        matched.append(found.total / observations)
    bare_sql = ("SELECT rowid, bm25(observations_fts) AS s FROM observations_fts WHERE observations_fts MATCH ?"
                " ORDER BY s LIMIT 20")
    for _ in range(rounds):
        for query in queries:
            start = time.perf_counter()
            search(conn, SearchQuery.build(query, project=project, limit=20))
            times.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            conn.execute(bare_sql, (fts.match_expression(query),)).fetchall()
            bare_times.append((time.perf_counter() - start) * 1000)
    p50, bare_p50 = statistics.median(times), statistics.median(bare_times)
    return {"p50_ms": round(p50, 3), "p95_ms": round(percentile(times, 0.95), 3),
            "bare_fts5_top20_p50_ms": round(bare_p50, 3), "ratio_to_bare_fts5": round(p50 / bare_p50, 2),
            "queries": len(queries), "rounds": rounds,
            "median_share_of_observations_matched": round(statistics.median(matched), 3)}


def main(argv: list[str]) -> dict:
    quick = "--quick" in argv
    with open(QUERIES, encoding="utf-8") as handle:
        queries = [line.strip() for line in handle if line.strip()]
    report: dict[str, object] = {"budgets": {"search_p50_100k_ms": SEARCH_P50_BUDGET_MS,
                                             "session_start_100k_over_1k": SESSION_START_GROWTH_BUDGET,
                                             "session_start_10k_ratio_to_bare": SESSION_START_RATIO_BUDGET,
                                             "user_prompt_ratio_to_bare": PROMPT_RATIO_BUDGET}}
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(project, ".git"))
        sizes = {"session_start": (1_000, 10_000, 100_000), "search": (10_000, 100_000)}
        if quick:
            sizes = {"session_start": (1_000, 10_000), "search": (2_000, 5_000)}
        hooks, searches, prompts = {}, {}, {}
        source: list[bytes] | None = None
        for count in sorted(set(sizes["session_start"]) | set(sizes["search"])):
            data_dir = os.path.join(tmp, f"data-{count}")
            conn = db.connect(db.db_path(data_dir))
            generate(conn, project, count)
            conn.execute("PRAGMA optimize")
            if count in sizes["session_start"]:
                hooks[str(count)] = bench_hook(data_dir, project, 10 if quick else 30)
                with_worker = "hybrid" in available_modes()
                if with_worker:
                    source = seed_vectors(conn, source)
                conn.close()
                prompts[str(count)] = bench_prompt_hook(data_dir, project, 10 if quick else 20, with_worker)
                conn = db.connect(db.db_path(data_dir))
            if count in sizes["search"]:
                searches[str(count)] = bench_search(conn, project, queries, 2 if quick else 5)
            conn.close()
            if count == 10_000:
                report["statusline"] = bench_statusline(data_dir, project, 10 if quick else 30)
        report["session_start"] = hooks
        report["user_prompt"] = prompts
        report["search"] = searches
        data_dir = os.path.join(tmp, "data-50")
        conn = db.connect(db.db_path(data_dir))
        generate(conn, project, 50)
        built = context.for_session(conn, project, values=settings.load(data_dir), data_dir=data_dir)
        conn.close()
        report["context_50"] = {"tokens": built["tokens"], "rows": built["shown"],
                                "budget_tokens": settings.DEFAULTS["context_max_tokens"]}
    small, big = hooks[str(min(hooks, key=int))], hooks[str(max(hooks, key=int))]
    report["session_start_growth"] = {"sizes": [min(hooks, key=int), max(hooks, key=int)],
                                      "cpu": round(big["hook_cpu_ms"] / small["hook_cpu_ms"], 2),
                                      "wall": round(big["hook_p50_ms"] / small["hook_p50_ms"], 2)}
    big_search = searches[str(max(sizes["search"]))]
    worker_ratios = [figures["worker_hybrid"]["ratio_to_bare"] for figures in prompts.values()
                     if isinstance(figures.get("worker_hybrid"), dict)]
    report["within_budget"] = {
        "session_start_10k": hooks["10000"]["ratio_to_bare"] <= SESSION_START_RATIO_BUDGET,
        "session_start_growth": report["session_start_growth"]["cpu"] <= SESSION_START_GROWTH_BUDGET,
        "user_prompt_nothing_relevant": bool(worker_ratios) and max(worker_ratios) <= PROMPT_RATIO_BUDGET,
        "search_p50": big_search["p50_ms"] <= SEARCH_P50_BUDGET_MS,
        "context_50": report["context_50"]["tokens"] <= report["context_50"]["budget_tokens"],
    }
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
