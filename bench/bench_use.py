"""Memory in use (issue 30): what the bookkeeping costs where a user could notice.

- `claude-mem status --json` at 10k observations with a month of use recorded (1,000 sessions, each shown
  an index of 50 observations and two prompts' memories, a tenth of it used), against the same command
  without the `usage` and `auto_memory` objects (status before issue 30), interleaved run by run, wall ms
  of the whole process. Budget: ≤ 2×.
- The worker's derivation (`recall.use.derive`): captured events read per second (a mix of our MCP
  calls, Bash, edits and turn ends), beside how fast the hooks capture them (it must keep up).

The post-tool hook is not touched (uses are derived in the worker); the session-start and user-prompt
hooks add one row to `injections` each (`python -m bench recall` measures them against their budgets).
`python -m bench use [--quick]` (quick: 2k observations, 200 sessions, fewer runs).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

from bench.bench_recall import generate
from claude_mem.recall import use
from claude_mem.store import context as store_context
from claude_mem.store import db
from claude_mem.store import use as store_use

STATUS_BUDGET_RATIO = 2.0
PLUGIN = "mcp__plugin_persistent-memory_memory__"
# The status command as the console script runs it; `before` leaves out what issue 30 added to it.
STATUS = ("import sys\n"
          "from claude_mem.cli import status\n"
          "if sys.argv[1] == 'before':\n"
          "    status.usage_report = lambda directory, days=7: None\n"
          "    status.auto_memory_status = lambda directory: {}\n"
          "from claude_mem.entry import main\n"
          "sys.argv = ['claude-mem', 'status', '--json']\n"
          "main()\n")


def seed_use(conn: db.Store, project: str, sessions: int, rng: random.Random) -> None:
    """`sessions` sessions over the last 30 days, each shown an index of 50 and two prompts' 3 memories."""
    ids = [row[0] for row in conn.execute("SELECT id FROM observations ORDER BY id DESC LIMIT 2000")]
    now = datetime.now(UTC)
    for n in range(sessions):
        at = (now - timedelta(minutes=int(30 * 24 * 60 * n / sessions))).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        content = f"bench-use-{n}"
        shown = rng.sample(ids[:300], 50)
        store_context.record_injection(conn, content, project, project, at, shown, True, 1300)
        for _ in range(2):
            store_context.record_shown(conn, content, rng.sample(ids, 3), at, 90)
        session = conn.execute("SELECT id FROM sessions WHERE content_session_id = ?", (content,)).fetchone()[0]
        used = [(session, row_id, rng.choice(("fetched", "searched", "cited")), at) for row_id in shown[:5]]
        store_use.record_used(conn, used, 0)


def status_times(data_dir: str, runs: int) -> dict[str, object]:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    times: dict[str, list[float]] = {"before": [], "now": []}
    report = None
    for _ in range(runs):
        for which in ("before", "now"):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", STATUS, which], capture_output=True, text=True, env=env,
                                  timeout=120, check=True)
            times[which].append((time.perf_counter() - started) * 1000)
            if which == "now":
                report = json.loads(done.stdout)["usage"]
    before, now = statistics.median(times["before"]), statistics.median(times["now"])
    assert report is not None
    return {"before_p50_ms": round(before, 1), "now_p50_ms": round(now, 1), "ratio": round(now / before, 3),
            "budget_ratio": STATUS_BUDGET_RATIO, "sessions": report["sessions"], "shown": report["shown"]}


def derive_rate(conn: db.Store, project: str, events: int, rng: random.Random) -> dict[str, object]:
    """Captured events per second the derivation reads, over a mix of tool calls and turn ends."""
    ids = [row[0] for row in conn.execute("SELECT id FROM observations ORDER BY id DESC LIMIT 300")]
    session = conn.execute("SELECT id FROM sessions WHERE content_session_id = 'bench-use-0'").fetchone()[0]
    conn.execute("UPDATE counters SET value = (SELECT COALESCE(MAX(id), 0) FROM pending_events)"
                 " WHERE name = ?", (store_use.WATERMARK,))

    def payload(n: int) -> tuple[str, str]:
        pick = n % 5
        if pick == 0:
            return "tool", json.dumps({"tool_name": PLUGIN + "search", "tool_input": {"query": "x"}, "tool_response": [
                {"type": "text", "text": "\n".join(f"#{row} 2026-11-01 decision t" for row in rng.sample(ids, 10))}]})
        if pick == 1:
            return "tool", json.dumps({"tool_name": PLUGIN + "get_observations", "tool_input": {"ids": rng.sample(ids, 2)}})
        if pick == 2:
            return "tool", json.dumps({"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/"},
                                       "tool_response": {"stdout": "." * 4000 + " 120 passed"}})
        if pick == 3:
            return "tool", json.dumps({"tool_name": "Edit", "tool_input": {"file_path": "src/a.py", "old_string": "a" * 500,
                                                                           "new_string": f"b # see #{rng.choice(ids)}"}})
        return "summarize", json.dumps({"last_assistant_message": f"Done; as #{rng.choice(ids)} said. " + "word " * 300})

    conn.execute("BEGIN IMMEDIATE")
    for n in range(events):
        kind, body = payload(n)
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload, status) VALUES (?, ?, ?, ?, 'done')",
                     (f"bench-use-event-{n}", session, kind, body))
    conn.execute("COMMIT")
    started = time.perf_counter()
    read = 0
    while True:
        done = use.derive(conn)
        if not done:
            break
        read += done
    seconds = time.perf_counter() - started
    return {"events": read, "events_per_s": round(read / seconds), "seconds": round(seconds, 2)}


def main(argv: list[str]) -> dict:
    quick = "--quick" in argv
    count, sessions, runs, events = (2_000, 200, 5, 5_000) if quick else (10_000, 1_000, 15, 20_000)
    rng = random.Random(30)
    with tempfile.TemporaryDirectory(prefix="bench-use-") as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(project, ".git"))
        data_dir = os.path.join(tmp, "data")
        conn = db.connect(db.db_path(data_dir))
        generate(conn, project, count)
        seed_use(conn, project, sessions, rng)
        conn.execute("PRAGMA optimize")
        status = status_times(data_dir, runs)
        derived = derive_rate(conn, project, events, rng)
        conn.close()
    return {"observations": count, "sessions": sessions, "status_json": status, "derive": derived}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
