"""Freshness at read time (issue 26): what marking stale memory costs, against itself switched off, in one run.

A git checkout of 150 files (one commit) and a store of 50 observations with 3 files each (the session-start
index shows all 50); then 10 files are edited (their observations turn `changed`) and 10 more only touched
(mtime moved, same content: hashed once, still `current`).

1. The session-start hook exactly as hooks.json runs it (`python3 -I -S scripts/hook.py session-start`),
   `stale_memory=mark` (freshness on) interleaved with `stale_memory=show` (off): p50 each, and the ratio.
   Every run is a new process, so nothing is cached. Target: ratio ≤ 1.2. Beside it, `context.build` in
   process (the hook's work after its imports; caches emptied before each run), on vs off.
2. Search in process (keyword, top 20, the standard query set): `search` followed by `freshness.on_hits` (on)
   interleaved with `search` alone (off): p50 each and the ratio. Target ≤ 1.2.

`python -m bench freshness [--quick]`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.bench_recall import QUERIES, generate
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall import freshness
from claude_mem.store import db, fingerprints

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATIO_TARGET = 1.2
FILES = 150
SHOWN = 50


def _git(root: str, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@e"}
    subprocess.run(["git", "-C", root, *args], check=True, capture_output=True, env=env)


def setup(tmp: str) -> tuple[str, str]:
    """(checkout, data dir): the repository, and 50 observations fingerprinting 3 of its files each."""
    root = os.path.join(tmp, "proj")
    os.makedirs(os.path.join(root, "src"))
    _git(root, "init", "-q")
    for n in range(FILES):
        with open(os.path.join(root, "src", f"m{n}.py"), "w") as handle:
            handle.write(f"# module {n}\n" + "value = 1\n" * (20 + n))
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "first")
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    data_dir = os.path.join(tmp, "data")
    conn = db.connect(db.db_path(data_dir))
    generate(conn, root, SHOWN)
    ids = [row[0] for row in conn.execute("SELECT id FROM observations ORDER BY id")]
    conn.execute("BEGIN")
    for index, obs in enumerate(ids):
        files = []
        for path in (f"src/m{(index * 3 + k) % FILES}.py" for k in range(3)):
            full = os.path.join(root, path)
            info = os.stat(full)
            files.append({"path": path, "size": info.st_size, "mtime_ns": info.st_mtime_ns,
                          "hash": freshness.blob_hash(full, info.st_size), "commit": head})
        fingerprints.add(conn, obs, files)
    conn.execute("COMMIT")
    conn.close()
    time.sleep(0.01)
    for n in range(10):  # edited: their observations turn `changed`
        with open(os.path.join(root, "src", f"m{n * 3}.py"), "a") as handle:
            handle.write("edited = True\n")
    for n in range(10):  # touched: mtime moved, content the same (hashed, still current)
        os.utime(os.path.join(root, "src", f"m{100 + n}.py"))
    return root, data_dir


def bench_hook(root: str, data_dir: str, runs: int) -> dict[str, Any]:
    payload = json.dumps({"session_id": "bench-fresh", "transcript_path": "/tmp/t.jsonl", "cwd": root,
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()
    hook = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), "session-start"]
    base = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    base.pop("CLAUDE_PROJECT_DIR", None)
    times: dict[str, list[float]] = {"mark": [], "show": []}
    texts: dict[str, str] = {}
    for _ in range(runs):
        for way in ("mark", "show"):
            env = {**base, "CLAUDE_MEM_STALE_MEMORY": way}
            start = time.perf_counter()
            out = subprocess.run(hook, input=payload, env=env, capture_output=True, timeout=60, check=True, cwd=root).stdout
            times[way].append((time.perf_counter() - start) * 1000)
            texts[way] = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    on, off = statistics.median(times["mark"]), statistics.median(times["show"])
    return {"on_p50_ms": round(on, 2), "off_p50_ms": round(off, 2), "ratio": round(on / off, 3), "runs": runs,
            "rows_marked": texts["mark"].count("(changed"), "rows_marked_off": texts["show"].count("(changed")}


def bench_build(root: str, data_dir: str, runs: int) -> dict[str, Any]:
    """`context.build` in process (what the hook runs after its imports), on vs off; the hash and root
    caches are emptied before every run, as in a new hook process."""
    from claude_mem import settings
    from claude_mem.recall import context
    values = settings.load(data_dir)
    conn = db.connect(db.db_path(data_dir))
    times: dict[str, list[float]] = {"mark": [], "show": []}
    try:
        for _ in range(runs):
            for way in ("mark", "show"):
                for cache in (freshness._HASHES, freshness._ROOTS, freshness._REAL):
                    cache.clear()
                start = time.perf_counter()
                context.build(conn, root, values={**values, "stale_memory": way}, data_dir=data_dir)
                times[way].append((time.perf_counter() - start) * 1000)
    finally:
        conn.close()
    on, off = statistics.median(times["mark"]), statistics.median(times["show"])
    return {"on_p50_ms": round(on, 3), "off_p50_ms": round(off, 3), "ratio": round(on / off, 3), "runs": runs}


def bench_search(data_dir: str, root: str, rounds: int) -> dict[str, Any]:
    with open(QUERIES, encoding="utf-8") as handle:
        queries = [line.strip() for line in handle if line.strip()]
    conn = db.connect(db.db_path(data_dir))
    times: dict[str, list[float]] = {"on": [], "off": []}
    stale = 0
    try:
        for _ in range(rounds):
            for query in queries:
                wanted = SearchQuery.build(query, mode="keyword", project=root, limit=20)
                start = time.perf_counter()
                search(conn, wanted)
                times["off"].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                found = search(conn, wanted)
                freshness.on_hits(conn, found.items)
                times["on"].append((time.perf_counter() - start) * 1000)
                stale += sum(1 for item in found.items if item.get("freshness") in freshness.STALE)
    finally:
        conn.close()
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {"on_p50_ms": round(on, 3), "off_p50_ms": round(off, 3), "ratio": round(on / off, 3),
            "searches": len(times["on"]), "stale_hits_seen": stale}


def main(argv: list[str]) -> dict[str, Any]:
    quick = "--quick" in argv
    with tempfile.TemporaryDirectory(prefix="bench-freshness-") as tmp:
        root, data_dir = setup(tmp)
        hook = bench_hook(root, data_dir, 10 if quick else 40)
        found = bench_search(data_dir, root, 1 if quick else 3)
        build = bench_build(root, data_dir, 20 if quick else 100)
    report = {"target_ratio": RATIO_TARGET, "session_start": hook, "search": found, "context_build_in_process": build,
              "within": {"session_start": hook["ratio"] <= RATIO_TARGET, "search": found["ratio"] <= RATIO_TARGET}}
    if "--json" not in argv:
        print(f"session-start hook, {SHOWN} observations × 3 files: {hook['on_p50_ms']} ms on, {hook['off_p50_ms']} ms off"
              f" = {hook['ratio']}×; search p50 {found['on_p50_ms']} ms on, {found['off_p50_ms']} ms off = {found['ratio']}×",
              file=sys.stderr)
    return report
