"""What telling the truth costs `/health` (issue 33, item 5): the report with its degraded checks (the
write-lock probe, cached for a second as a polled /health meets it, and uncached: every call probes)
against the report without them, interleaved in the same run on a real database; and the report while
another process holds the database locked (the probe's 250 ms busy timeout is the bound)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

from claude_mem import settings
from claude_mem.worker import health
from claude_mem.worker.context import WorkerContext

HOLD = ("import sqlite3, sys\nconn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('BEGIN EXCLUSIVE')\nprint('held', flush=True)\nsys.stdin.readline()\n")


def timed(ctx: WorkerContext) -> float:
    started = time.perf_counter()
    asyncio.run(health.health_report(ctx))
    return (time.perf_counter() - started) * 1000


def main(argv: list[str]) -> dict:
    rounds = 30 if "--quick" in argv else 120
    with tempfile.TemporaryDirectory(prefix="bench-health-") as data_dir:
        ctx = WorkerContext(settings=settings.load(data_dir), data_dir=data_dir)
        ctx.connect().close()
        checks = list(health.DEGRADED_CHECKS)
        samples: dict[str, list[float]] = {"without_checks": [], "cached": [], "uncached": []}
        for _ in range(rounds):  # interleaved: the machine's noise hits all three alike
            health.DEGRADED_CHECKS[:] = []
            samples["without_checks"].append(timed(ctx))
            health.DEGRADED_CHECKS[:] = checks
            samples["cached"].append(timed(ctx))
            health._locks.clear()
            samples["uncached"].append(timed(ctx))
        holder = subprocess.Popen([sys.executable, "-c", HOLD, os.path.join(data_dir, "claude-mem.db")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            locked = []
            for _ in range(5):
                health._locks.clear()
                locked.append(timed(ctx))
            status = asyncio.run(health.health_report(ctx))["status"]
        finally:
            holder.communicate("go\n", timeout=30)
    p50 = {name: round(statistics.median(values), 2) for name, values in samples.items()}
    return {"rounds": rounds, "p50_ms": p50, "locked_p50_ms": round(statistics.median(locked), 1),
            "locked_status": status,
            "ratio_cached": round(p50["cached"] / p50["without_checks"], 2),
            "ratio_uncached": round(p50["uncached"] / p50["without_checks"], 2)}
