"""Recall benchmarks (DESIGN §11): session-start hook latency, FTS search latency, context size.

- `session-start` exactly as hooks.json runs it (`python3 -I -S scripts/hook.py session-start`)
  at 1k and 10k observations, against a bare `python -c pass` of the same interpreter measured in
  the same run. Budget: ≤ 60 ms at 10k.
- Search p50/p95 in process at 10k and 100k observations over the standard query set
  (`bench/bench-queries.txt`). Budget: p50 ≤ 5 ms at 100k.
- Context size in tokens (chars / 4) at 50 observations.
- The `user-prompt` hook at 10k observations: per-prompt memory off, on with no worker (keyword
  search in the hook) and on with a worker holding every vector (hybrid), each beside a bare
  `python -c pass`; what it adds must leave the hook budget as it was (issue 12).
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
from claude_mem.index.search import search
from claude_mem.recall import context
from claude_mem.store import db

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
QUERIES = os.path.join(HERE, "bench-queries.txt")
HOOK_BUDGET_MS = 60.0
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


def bench_hook(data_dir: str, project: str, runs: int) -> dict:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    payload = json.dumps({"session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": project,
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()
    hook = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), "session-start"]
    bare = [sys.executable, "-c", "pass"]
    out = subprocess.run(hook, input=payload, env=env, capture_output=True, timeout=60, check=True).stdout
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    shown = sum(1 for line in text.splitlines() if line[:1] == "#" and line[1:2].isdigit())
    hook_ms, bare_ms = [], []
    for _ in range(runs):  # interleaved, so noise hits both alike
        bare_ms.append(run_ms(bare, env))
        hook_ms.append(run_ms(hook, env, payload))
    hook_p50, bare_p50 = statistics.median(hook_ms), statistics.median(bare_ms)
    return {"hook_p50_ms": round(hook_p50, 2), "hook_p95_ms": round(percentile(hook_ms, 0.95), 2),
            "bare_python_p50_ms": round(bare_p50, 2), "ratio_to_bare": round(hook_p50 / bare_p50, 2),
            "rows_injected": shown, "runs": runs}


PROMPT = "why does the websocket reconnect lose the session cursor after a deploy"


def bench_prompt_hook(data_dir: str, project: str, runs: int) -> dict:
    """The user-prompt hook as hooks.json runs it: memory off, keyword in the hook, then via a worker."""
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false",
           "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    hook = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), "user-prompt"]
    bare = [sys.executable, "-c", "pass"]

    def payload(n: int) -> bytes:  # a new session each time: nothing counts as already shown
        return json.dumps({"session_id": f"bench-prompt-{n}", "transcript_path": "/tmp/t.jsonl", "cwd": project,
                           "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}).encode()

    def measure(name: str, extra: dict) -> None:
        times, bare_times, added = [], [], 0
        for n in range(runs + 1):
            run_env = {**env, **extra}
            bare_ms = run_ms(bare, run_env)
            start = time.perf_counter()
            out = subprocess.run(hook, input=payload(n), env=run_env, capture_output=True, timeout=60, check=True).stdout
            if n:  # the first call warms caches (and the worker's model)
                times.append((time.perf_counter() - start) * 1000)
                bare_times.append(bare_ms)
                added += out.count(b"\\n#")
        p50, bare_p50 = statistics.median(times), statistics.median(bare_times)
        report[name] = {"p50_ms": round(p50, 2), "bare_python_p50_ms": round(bare_p50, 2),
                        "ratio_to_bare": round(p50 / bare_p50, 2), "memories_added_per_prompt": round(added / runs, 2)}

    report: dict[str, object] = {"runs": runs}
    measure("off", {"CLAUDE_MEM_PROMPT_CONTEXT": "false"})
    measure("keyword_in_hook", {})
    from claude_mem.index.search import available_modes

    if "hybrid" not in available_modes():
        report["worker_hybrid"] = "the search extra is not installed"
        return report
    from claude_mem.index.semantic import embed_missing

    conn = db.connect(db.db_path(data_dir))
    started = time.perf_counter()
    while embed_missing(conn, 64):
        pass
    conn.close()
    report["embedded_in_s"] = round(time.perf_counter() - started, 1)
    subprocess.run([sys.executable, "-m", "claude_mem", "worker", "start"], env=env, capture_output=True, timeout=120)
    try:
        measure("worker_hybrid", {"CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "2000"})
    finally:
        subprocess.run([sys.executable, "-m", "claude_mem", "worker", "stop"], env=env, capture_output=True, timeout=120)
    return report


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
    report: dict[str, object] = {"budgets": {"session_start_10k_ms": HOOK_BUDGET_MS,
                                             "search_p50_100k_ms": SEARCH_P50_BUDGET_MS}}
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(project, ".git"))
        sizes = {"session_start": (1_000, 10_000), "search": (10_000, 100_000)}
        if quick:
            sizes = {"session_start": (1_000, 2_000), "search": (2_000, 5_000)}
        hooks, searches = {}, {}
        for count in sorted(set(sizes["session_start"]) | set(sizes["search"])):
            data_dir = os.path.join(tmp, f"data-{count}")
            conn = db.connect(db.db_path(data_dir))
            generate(conn, project, count)
            conn.execute("PRAGMA optimize")
            if count in sizes["session_start"]:
                hooks[str(count)] = bench_hook(data_dir, project, 10 if quick else 30)
            if count in sizes["search"]:
                searches[str(count)] = bench_search(conn, project, queries, 2 if quick else 5)
            conn.close()
            if count == max(sizes["session_start"]):
                report["statusline"] = bench_statusline(data_dir, project, 10 if quick else 30)
                report["user_prompt"] = bench_prompt_hook(data_dir, project, 10 if quick else 30)
        report["session_start"] = hooks
        report["search"] = searches
        data_dir = os.path.join(tmp, "data-50")
        conn = db.connect(db.db_path(data_dir))
        generate(conn, project, 50)
        built = context.for_session(conn, project, values=settings.load(data_dir), data_dir=data_dir)
        conn.close()
        report["context_50"] = {"tokens": built["tokens"], "rows": built["shown"],
                                "budget_tokens": settings.DEFAULTS["context_max_tokens"]}
    big_hook = hooks[str(max(sizes["session_start"]))]
    big_search = searches[str(max(sizes["search"]))]
    report["within_budget"] = {
        "session_start": big_hook["hook_p50_ms"] <= HOOK_BUDGET_MS,
        "search_p50": big_search["p50_ms"] <= SEARCH_P50_BUDGET_MS,
        "context_50": report["context_50"]["tokens"] <= report["context_50"]["budget_tokens"],
    }
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
