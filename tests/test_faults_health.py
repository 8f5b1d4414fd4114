"""A health that tells the truth (issue 33, item 5): while another process holds the database's write
lock (`BEGIN EXCLUSIVE`), a real worker's `/health` says `degraded` with the reason — quickly, though
it is polled — `status` (text and --json) says it too, the worker log has one clear line and no
traceback, and once the lock is let go it is ok again and the events captured meanwhile are observed.
A failing observer lane (batch after batch failing) and the hook point for other conditions are
degraded reasons too."""

import asyncio
import glob
import json
import os
import subprocess
import sys
import time
import urllib.request

from claude_mem.capture import trouble
from claude_mem.observer.pipeline import FAILING_STREAK, Pipeline
from claude_mem.observer.provider import Health, ProviderError
from claude_mem.runtime import discovery
from claude_mem.store import db
from claude_mem.worker import health
from conftest import REPO
from observer_support import SESSION_EDIT, connect, drain, load_session_edit
from test_worker_app import make_ctx
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import (
    wait_for,
    worker_env,  # noqa: F401  (a fixture)
)

HOLD = (
    "import sqlite3, sys, time\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "conn.execute('BEGIN EXCLUSIVE')\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"  # until the test lets go
    "conn.execute('ROLLBACK')\n"
)


def get_health(port: int) -> tuple[dict, float]:
    started = time.monotonic()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
        body = json.loads(response.read())
    return body, time.monotonic() - started


def codes(body: dict) -> set[str]:
    return {reason["code"] for reason in body["degraded"]}


def run_hook(data_dir, name: str, payload: dict) -> None:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir), "CLAUDE_MEM_AUTOSTART": "false"}
    done = subprocess.run([sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), name],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr


def session_hooks(data_dir) -> int:
    """The recorded session's hooks, as Claude Code runs them; how many events they capture."""
    names = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PostToolUse": "post-tool",
             "Stop": "stop", "SessionEnd": "session-end"}
    count = 0
    for path in sorted(glob.glob(os.path.join(SESSION_EDIT, "*.json"))):
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
        run_hook(data_dir, names[payload["hook_event_name"]], payload)
        count += payload["hook_event_name"] != "SessionStart"
    return count


def test_a_locked_database_is_degraded_with_the_reason_then_ok_again(worker_env):  # noqa: F811
    run_cli("worker", "start")
    port = discovery.read_info(str(worker_env))["port"]
    body, _ = get_health(port)
    assert body["status"] == "ok" and body["degraded"] == [], body["degraded"]

    holder = subprocess.Popen([sys.executable, "-c", HOLD, db.db_path(str(worker_env))], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        captured = session_hooks(worker_env)  # the hooks meet the lock: they spool, exit 0
        body = wait_for(lambda: (lambda b: b if "database_locked" in codes(b) else None)(get_health(port)[0]),
                        timeout=20, message="/health names the lock")
        assert body["status"] == "degraded"
        reason = next(r["reason"] for r in body["degraded"] if r["code"] == "database_locked")
        assert "locked" in reason and "another process" in reason, reason
        seconds = max(get_health(port)[1] for _ in range(5))
        assert seconds < 1.0, seconds  # `status` asks with a 1 s timeout
        # the observer's own writes meet the lock (its lane polls the queue): named too
        body = wait_for(lambda: (lambda b: b if "observer_writes" in codes(b) else None)(get_health(port)[0]),
                        timeout=40, message="/health names the observer's locked writes")
        shown = json.loads(run_cli("status", "--json").stdout)
        assert "database_locked" in {r["code"] for r in shown["degraded"]}, shown["degraded"]
        text = run_cli("status").stdout
        assert "degraded:" in text and "database is locked" in text, text
        time.sleep(12)  # past the worker's 10 s busy timeout at least once more
    finally:
        holder.communicate("go\n", timeout=30)

    body = wait_for(lambda: (lambda b: b if b["status"] == "ok" else None)(get_health(port)[0]),
                    timeout=60, message="/health ok again")
    assert body["degraded"] == []
    conn = db.connect(db.db_path(str(worker_env)))
    wait_for(lambda: conn.execute("SELECT COUNT(*) FROM pending_events WHERE status = 'done'").fetchone()[0]
             >= captured, timeout=60, message="the events captured under the lock observed")
    assert conn.execute("SELECT COUNT(*) FROM pending_events WHERE status != 'done'").fetchone()[0] == 0
    log = (worker_env / "logs" / "worker.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert log.count("the database is locked (") == 1, log[-3000:]  # one line per episode
    assert "writable again" in log


class FailingSession:
    async def send(self, request):
        raise ProviderError("HTTP 500 from the observer API")

    async def close(self):
        return None


class Failing:
    """A provider whose every reply fails with a server error."""

    name = "failing"
    takes_system_prompt = False

    async def open(self, session_info):
        return FailingSession()

    async def health(self):
        return Health(ok=True)

    async def aclose(self):
        return None


def test_a_failing_observer_lane_is_a_degraded_reason_until_a_batch_is_stored(data_dir):
    conn = connect(data_dir)
    for index in range(FAILING_STREAK + 1):
        load_session_edit(conn, content_id=f"sess-{index}")
    problems: dict[str, str] = {}
    values = make_ctx(data_dir).settings
    values.update(retry_backoff_seconds=0.0, max_attempts=1)
    pipeline = Pipeline(conn, values, Failing(), problems=problems)
    asyncio.run(drain(pipeline))
    assert pipeline.streak >= FAILING_STREAK
    assert "batches in a row failed" in problems["observer"] and "HTTP 500" in problems["observer"]
    ctx = make_ctx(data_dir)
    ctx.service_errors.update(problems)
    report = asyncio.run(health.health_report(ctx))
    assert report["status"] == "degraded" and "observer" in codes(report)
    pipeline._succeeded()
    assert "observer" not in problems and pipeline.streak == 0


def test_the_hook_point_takes_any_condition_and_a_check_that_fails_is_named(data_dir, monkeypatch):
    ctx = make_ctx(data_dir)
    assert asyncio.run(health.health_report(ctx))["status"] == "ok"

    def disk_full(ctx):
        return [("disk_full", "disk full, 3 events waiting"), "read-only data dir",
                {"code": "schema_newer", "reason": "schema v25 is newer than this build (v21)"}]

    def broken(ctx):
        raise OSError("no such thing")

    monkeypatch.setattr(health, "DEGRADED_CHECKS", [*health.DEGRADED_CHECKS, disk_full, broken])
    report = asyncio.run(health.health_report(ctx))
    assert report["status"] == "degraded"
    assert {"disk_full", "schema_newer", "health_check"} <= codes(report)
    assert any("read-only data dir" == r["reason"] for r in report["degraded"])
    assert any("broken check failed: OSError" in r["reason"] for r in report["degraded"])


def test_the_lock_probe_is_cached_and_writes_nothing(data_dir):
    ctx = make_ctx(data_dir)
    before = os.stat(db.db_path(str(data_dir))).st_mtime_ns
    started = time.monotonic()
    for _ in range(50):
        assert health.database_lock(ctx) == []
    assert time.monotonic() - started < 1.0  # cached: not 50 probes
    assert os.stat(db.db_path(str(data_dir))).st_mtime_ns == before


def test_what_the_hooks_recorded_is_a_degraded_reason_until_it_is_cleared(data_dir):
    """The conditions the hooks and the store record (`store.db.conditions`) reach `/health` through the
    `store_conditions` check: an event a full disk sent to the overflow makes it `disk_full`, with the
    count waiting; once the overflow is drained and the condition cleared, it is ok again."""
    ctx = make_ctx(data_dir)
    assert asyncio.run(health.health_report(ctx))["status"] == "ok"
    kept = trouble.keep(str(data_dir), {"hook": "post-tool", "payload": {"tool_name": "Bash"}},
                        trouble.DISK_FULL, "No space left on device")
    assert kept is not None
    report = asyncio.run(health.health_report(ctx))
    assert report["status"] == "degraded"
    [reason] = [r for r in report["degraded"] if r["code"] == "disk_full"]
    assert "disk full, 1 event(s) waiting" in reason["reason"]
    os.remove(kept)
    trouble.clear(str(data_dir))
    assert asyncio.run(health.health_report(ctx))["status"] == "ok"
