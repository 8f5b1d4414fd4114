"""Capture under load and the worker's memory: 1,000 real hook calls 16 at a time (DESIGN §11: 0 lost,
0 "database is locked" surfaced), then a real worker with the offline observer drains the queue;
prints capture throughput, observer throughput and the worker's resident memory."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

import psutil

from bench.sessions import fire, simulated_day

MEMORY_BUDGET_MB = 350  # with the search model loaded (issue 12); keyword-only today


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "claude_mem", *args], env=env, capture_output=True, text=True, timeout=120)


def pending(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM pending_events WHERE status IN ('pending', 'claimed')").fetchone()[0]
    finally:
        conn.close()


def main(argv: list[str]) -> dict:
    calls = 300 if "--quick" in argv else 1000
    with tempfile.TemporaryDirectory(prefix="bench-worker-") as data_dir:
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false",
               "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
        day = simulated_day(calls, random.Random(11))
        started = time.perf_counter()
        counts = fire(day.calls, env)
        capture_s = time.perf_counter() - started
        path = os.path.join(data_dir, "claude-mem.db")
        conn = sqlite3.connect(path)
        stored = {row[0] for row in conn.execute("SELECT event_key FROM pending_events WHERE kind = 'tool'")}
        conn.close()
        lost = len(day.tool_ids - stored)
        events = pending(path)
        started = time.perf_counter()
        cli(env, "worker", "start")
        pid = json.load(open(os.path.join(data_dir, "worker.json"), encoding="utf-8"))["pid"]
        while pending(path) and time.perf_counter() - started < 300:
            time.sleep(0.2)
        drain_s = time.perf_counter() - started
        rss_mb = psutil.Process(pid).memory_info().rss / 2**20
        cli(env, "worker", "stop")
    return {
        "hook_calls": counts["calls"], "lost_events": lost, "nonzero_exits": counts["nonzero_exit"],
        "locked_messages": counts["locked_messages"],
        "capture_calls_per_s": round(counts["calls"] / capture_s, 1),
        "observer_events_per_s": round(events / drain_s, 1) if drain_s else None,  # worker start included
        "worker_rss_mb": round(rss_mb, 1), "memory_budget_mb": MEMORY_BUDGET_MB,
        "within_budget": lost == 0 and counts["locked_messages"] == 0 and rss_mb <= MEMORY_BUDGET_MB,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
