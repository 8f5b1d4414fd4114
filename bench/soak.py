"""`make soak` / `python -m bench.soak [--quick]`: hours of abuse in minutes, with zeros to show for it.

A simulated day of sessions (10,000 real hook calls, 16 at a time, some carrying planted fake
secrets) runs while the worker — the real one, observing with the `fake` provider, which words its
answer differently on every attempt — is killed with `kill -9` mid-batch 100 times and restarted as a
hook's autostart would; between kills, damage is injected at random: a backup's page overwritten,
the search index's blocks garbled, the live database's index pages overwritten. At the end the
worker drains the queue and stops, and the soak counts what must be zero:

- lost events: a tool event a hook acknowledged that is neither in the database nor in the spool;
- duplicate results: an event whose observations came from two different answers;
- orphan processes: anything still running for this data dir after the stop;
- secrets found: a planted secret anywhere in the data dir (database, WAL, backups, logs, quarantine).

It prints a table (and `--json` the figures); exit code 1 when a zero is not zero. Not part of CI.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import psutil
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.sessions import fake_secrets, fire, simulated_day

ZERO_TARGETS = ("lost_events", "duplicate_results", "orphan_processes", "secrets_found")
# The `fake` provider is the test suite's plugin (tests/plugins/ registers tests/fakes/observer_provider.py).
TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
PLUGIN_PATH = [os.path.join(TESTS, "plugins"), TESTS]


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "claude_mem", *args], env=env, capture_output=True, text=True, timeout=120)


def worker_pids(data_dir: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.pid != os.getpid() and proc.environ().get("CLAUDE_MEM_DATA_DIR") == data_dir:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def kill_worker(data_dir: str) -> None:
    for pid in worker_pids(data_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while worker_pids(data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    for name in ("worker.json",):
        try:
            os.unlink(os.path.join(data_dir, name))
        except FileNotFoundError:
            pass


def claimed(path: str) -> int:
    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM pending_events WHERE status = 'claimed'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def unfinished(path: str, data_dir: str) -> int:
    """Events still to observe: pending or claimed rows, and spooled lines not yet ingested."""
    conn = sqlite3.connect(path, timeout=10)
    try:
        left: int = conn.execute("SELECT COUNT(*) FROM pending_events WHERE status IN ('pending', 'claimed')").fetchone()[0]
    finally:
        conn.close()
    spool = os.path.join(data_dir, "spool")
    return left + sum(1 for name in os.listdir(spool) if name.endswith(".jsonl")) if os.path.isdir(spool) else left


def damage(data_dir: str, rng: random.Random) -> str:
    """One kind of damage, picked at random, done while the worker is down; returns what was done."""
    path = os.path.join(data_dir, "claude-mem.db")
    backups = sorted(os.listdir(os.path.join(data_dir, "backups"))) if os.path.isdir(os.path.join(data_dir, "backups")) else []
    choice = rng.choice(["backup-page", "search-index", "index-page"])
    if choice == "backup-page" and backups:
        target = os.path.join(data_dir, "backups", rng.choice(backups))
        size = os.path.getsize(target)
        with open(target, "r+b") as handle:
            handle.seek(rng.randrange(4096, max(size, 4097)) // 4096 * 4096)
            handle.write(os.urandom(4096))
        return "backup-page"
    conn = sqlite3.connect(path, timeout=10)
    try:
        if choice == "search-index":
            conn.execute("UPDATE observations_fts_data SET block = randomblob(length(block)) WHERE length(block) > 8")
            conn.commit()
            return "search-index"
        pages = [row[0] for row in conn.execute(
            "SELECT pageno FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE type = 'index'"
            " AND tbl_name = 'pending_events')")]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    if pages:
        with open(path, "r+b") as handle:
            handle.seek((rng.choice(pages) - 1) * 4096)
            handle.write(bytes([0x0A, 0xFF]) + os.urandom(4094))
    return "index-page"


def count_results(path: str, day_tool_ids: set[str], data_dir: str) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        keys = {row[0] for row in conn.execute("SELECT event_key FROM pending_events")}
        duplicates = conn.execute(
            "SELECT COUNT(*) FROM (SELECT s.event_id FROM observation_sources s JOIN observations o"
            " ON o.id = s.observation_id GROUP BY s.event_id HAVING COUNT(DISTINCT o.created_at) > 1)").fetchone()[0]
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())
        observations = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    finally:
        conn.close()
    spooled = set()
    spool = os.path.join(data_dir, "spool")
    for name in os.listdir(spool) if os.path.isdir(spool) else []:
        if name.endswith(".jsonl"):
            for line in open(os.path.join(spool, name), encoding="utf-8", errors="replace"):
                try:
                    spooled.add(json.loads(line).get("event_key"))
                except ValueError:
                    continue
    return {"lost_events": len(day_tool_ids - keys - spooled), "duplicate_results": duplicates,
            "observations": observations, "events_done": statuses.get("done", 0),
            "events_failed": statuses.get("failed", 0), "events_pending": statuses.get("pending", 0) + statuses.get("claimed", 0)}


def secrets_found(data_dir: str, secrets: dict[str, str]) -> list[str]:
    found = []
    for root, _dirs, names in os.walk(data_dir):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                blob = handle.read()
            found += [f"{key} in {os.path.relpath(os.path.join(root, name), data_dir)}"
                      for key, value in secrets.items() if value.encode() in blob]
    return found


def size_of(data_dir: str, sub: str = "") -> int:
    total = 0
    for root, _dirs, names in os.walk(os.path.join(data_dir, sub)):
        total += sum(os.path.getsize(os.path.join(root, name)) for name in names)
    return total


def soak(calls: int, kills: int, seed: int, console: Console) -> dict[str, object]:
    rng = random.Random(seed)
    secrets = fake_secrets(rng)
    day = simulated_day(calls, rng, secrets)
    data_dir = tempfile.mkdtemp(prefix="soak-")
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false", "CLAUDE_MEM_PROVIDER": "fake",
           "CLAUDE_MEM_FAKE_SCRIPT": json.dumps({"delay": 0.2}), "CLAUDE_MEM_WORKER_PORT": "0",
           "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0",
           "PYTHONPATH": os.pathsep.join([*PLUGIN_PATH, *filter(None, [os.environ.get("PYTHONPATH")])])}
    path = os.path.join(data_dir, "claude-mem.db")
    damages: dict[str, int] = {}
    # Rounds between kills; a session's calls stay together and in order.
    sessions: dict[str, list] = {}
    for call in day.calls:
        sessions.setdefault(str(call[1]["session_id"]), []).append(call)
    groups = list(sessions.values())
    chunks = [[call for group in groups[i::max(kills, 1)] for call in group] for i in range(max(kills, 1))]
    hook_counts = {"calls": 0, "nonzero_exit": 0, "locked_messages": 0}
    start_db = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        hooks_task = progress.add_task("hook calls", total=len(day.calls))
        kills_task = progress.add_task("kill -9 mid-batch", total=kills)
        for round_number, chunk in enumerate(chunks):
            cli(env, "worker", "start")
            counts = fire(chunk, env, progress=lambda: progress.advance(hooks_task))
            for key in hook_counts:
                hook_counts[key] += counts[key]
            if round_number < kills:
                deadline = time.monotonic() + 5
                while not claimed(path) and time.monotonic() < deadline:
                    time.sleep(0.02)
                kill_worker(data_dir)
                progress.advance(kills_task)
                if round_number % 5 == 0:
                    cli(env, "backup")
                if rng.random() < 0.2:
                    kind = damage(data_dir, rng)
                    damages[kind] = damages.get(kind, 0) + 1
            if not start_db and os.path.exists(path):
                start_db = os.path.getsize(path)
        drain = progress.add_task("draining the queue", total=None)
        cli(env, "worker", "start")
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and unfinished(path, data_dir):
            time.sleep(0.5)
        progress.update(drain, completed=1, total=1)
        health = json.loads(cli(env, "worker", "status", "--json").stdout or "{}")
        cli(env, "worker", "stop")
    time.sleep(0.5)
    results = count_results(path, day.tool_ids, data_dir)
    leaks = secrets_found(data_dir, secrets)
    orphans = worker_pids(data_dir)
    report: dict[str, object] = {
        "hook_calls": hook_counts["calls"], "hook_nonzero_exits": hook_counts["nonzero_exit"],
        "locked_messages": hook_counts["locked_messages"], "worker_kills": kills, "damage_injected": damages,
        **results, "orphan_processes": len(orphans), "secrets_found": len(leaks), "secret_places": leaks[:10],
        "db_bytes": os.path.getsize(path), "db_growth_bytes": os.path.getsize(path) - start_db,
        "log_bytes": size_of(data_dir, "logs"), "backups_bytes": size_of(data_dir, "backups"),
        "store_repairs": (health.get("health") or {}).get("store", {}), "data_dir": data_dir,
    }
    for pid in orphans:
        psutil.Process(pid).kill()
    return report


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    console = Console(stderr=True)
    calls, kills = (800, 8) if quick else (10_000, 100)
    console.print(f"soak: {calls} hook calls, 16 at a time; {kills} × kill -9 of the worker mid-batch; random damage")
    started = time.monotonic()
    report = soak(calls, kills, seed=20261123, console=console)
    report["seconds"] = round(time.monotonic() - started, 1)
    table = Table(title="claude-mem soak")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("target")
    for key, value in report.items():
        if key in ("secret_places", "data_dir", "store_repairs"):
            continue
        target = "0" if key in ZERO_TARGETS else ""
        mark = "" if not target else (" ✓" if value == 0 else " ✗")
        table.add_row(key.replace("_", " "), f"{value}{mark}", target)
    console.print(table)
    if report["secret_places"]:
        console.print("secrets found in: " + "; ".join(report["secret_places"]))  # type: ignore[arg-type]
    if "--json" in argv:
        print(json.dumps(report, indent=2))
    return 1 if any(report[key] for key in ZERO_TARGETS) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
