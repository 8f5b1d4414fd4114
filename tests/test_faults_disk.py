"""Fault: the data dir's disk fills up (issue 33, item 1), on a real 3 MiB tmpfs.

300 post-tool hooks run as Claude Code runs them, 16 at a time, on a data dir with a few KiB free: every
hook exits 0 with no traceback, says so once per session (`systemMessage`), keeps its event (the overflow
of `capture.trouble`, on another filesystem), leaves no empty or partial file; `status` says "disk full,
N events waiting". Space freed, the next hook and the worker's ingest bring every event back: 0 lost.
The quarantine cap holds under 300 concurrent bad inputs.
"""

import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

from claude_mem.capture import diagnostics, trouble
from claude_mem.cli import checks
from claude_mem.store import capture, db
from fault_support import tmpfs_data_dir
from hook_support import load, rows, run_hook

HOOKS = 300
PARALLEL = 16


def tool_payload(index: int) -> dict:
    payload = load("session-edit/06-PostToolUse.Bash.json")
    payload["session_id"] = f"disk-session-{index % 5}"
    payload["tool_use_id"] = f"toolu_disk_{index:05d}"
    payload["tool_response"]["stdout"] = f"output {index} " + "x" * 2000
    return payload


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A 3 MiB tmpfs as the data dir's filesystem (yields the data dir)."""
    for mount in tmpfs_data_dir(tmp_path, monkeypatch, "3m"):
        yield os.path.join(mount, "data")


def fill(mount: str, leave: int) -> str:
    """Fill the filesystem at `mount` but `leave` bytes; returns the filler file."""
    filler = os.path.join(mount, "filler")
    stat = os.statvfs(mount)
    free = stat.f_bavail * stat.f_frsize
    with open(filler, "wb") as handle:
        handle.write(b"\0" * max(free - leave, 0))
    return filler


def empty_files(*roots: str) -> list[str]:
    """Empty files but SQLite's own (a WAL is empty after a checkpoint) and hidden markers."""
    found = []
    for root in roots:
        for folder, _dirs, names in os.walk(root):
            found += [os.path.join(folder, name) for name in names
                      if os.path.getsize(os.path.join(folder, name)) == 0 and not name.startswith(".")
                      and not name.endswith(("-wal", "-shm"))]
    return found


def ingest(data_dir) -> int:
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        return capture.ingest_spool(conn, str(data_dir))
    finally:
        conn.close()


def test_three_hundred_hooks_on_a_full_disk_lose_nothing(small_disk, tmp_path):
    data_dir = str(small_disk)
    start = load("session-edit/01-SessionStart.json")
    assert run_hook("session-start", start).returncode == 0  # the database exists, with its schema
    filler = fill(os.path.dirname(data_dir), leave=48 * 1024)

    def one(index: int) -> subprocess.CompletedProcess:
        return run_hook("post-tool", tool_payload(index), timeout=120)

    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = list(pool.map(one, range(HOOKS)))
    assert [r.returncode for r in results] == [0] * HOOKS
    assert not [r.stderr for r in results if b"Traceback" in r.stderr or b"internal error" in r.stderr]
    messages = [json.loads(r.stdout)["systemMessage"] for r in results if r.stdout.strip()]
    assert messages and all("full" in message for message in messages), messages[:3]
    assert len(messages) <= 5  # once per session (5 sessions), not once per hook
    empties = empty_files(data_dir, str(tmp_path / "run"))
    quarantined = diagnostics.capture_report(data_dir)["quarantined"]
    conditions = trouble.store_conditions(data_dir)
    assert conditions and conditions[0]["state"] == "disk-full", conditions
    waiting = conditions[0]["waiting"]
    status = subprocess.run([sys.executable, "-m", "claude_mem", "status"], capture_output=True, text=True,
                            timeout=60, env=os.environ)
    assert "disk full" in status.stdout, status.stdout
    assert "bad input" not in status.stdout and "not known" not in status.stdout, status.stdout
    said = checks.capture_condition_checks(data_dir)  # doctor's line (its data dir checks)
    assert len(said) == 1 and "disk full" in said[0].detail and said[0].status == checks.PROBLEM, said

    os.unlink(filler)  # space returns: the next hook brings the events back, the worker ingests them
    subprocess.run(["mount", "-o", "remount,size=16m", os.path.dirname(data_dir)], check=True)
    prompt = load("session-edit/02-UserPromptSubmit.json")
    prompt["session_id"] = "disk-session-0"
    assert run_hook("user-prompt", prompt).returncode == 0  # the next turn brings the kept events back
    assert run_hook("post-tool", tool_payload(HOOKS)).returncode == 0
    ingest(data_dir)
    stored = rows(data_dir, "SELECT COUNT(*) FROM pending_events WHERE kind IN ('tool', 'tool_failure')")[0][0]
    lost = HOOKS + 1 - stored
    after = trouble.store_conditions(data_dir)
    print(json.dumps({"hooks": HOOKS, "lost": lost, "empty_files": len(empties), "quarantined": quarantined,
                      "quarantine_cap": diagnostics.QUARANTINE_KEEP, "waiting_while_full": waiting,
                      "notices": len(messages), "conditions_after": after}))
    assert lost == 0
    assert empties == []
    assert quarantined <= diagnostics.QUARANTINE_KEEP
    assert not trouble.waiting_files(data_dir)
    assert [c for c in after if c["state"] == "disk-full"] == []


def test_quarantine_cap_holds_under_three_hundred_concurrent_bad_inputs(data_dir):
    def one(index: int) -> subprocess.CompletedProcess:
        return run_hook("post-tool", b"{not json %d" % index, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = list(pool.map(one, range(HOOKS)))
    assert [r.returncode for r in results] == [0] * HOOKS
    folder = os.path.join(str(data_dir), diagnostics.QUARANTINE_DIR)
    kept = [name for name in os.listdir(folder) if not name.startswith(".")]
    print(json.dumps({"bad_inputs": HOOKS, "quarantined": len(kept), "cap": diagnostics.QUARANTINE_KEEP}))
    assert len(kept) == diagnostics.QUARANTINE_KEEP
    assert empty_files(folder) == []


def test_the_overflow_is_bounded_private_and_told_once(data_dir, tmp_path, monkeypatch):
    runtime = tmp_path / "runtime"  # conftest's private $XDG_RUNTIME_DIR
    monkeypatch.setattr(trouble, "OVERFLOW_BYTES", 2200)
    everywhere = trouble.candidates
    monkeypatch.setattr(trouble, "candidates", lambda data: everywhere(data)[:1])  # only the runtime dir
    os.makedirs(data_dir)
    record = {"kind": "tool", "content_session_id": "s", "payload": {"stdout": "x" * 600}}
    kept = [trouble.keep(str(data_dir), record, trouble.DISK_FULL, "ENOSPC") for _ in range(4)]
    assert all(kept[:3]) and kept[3] is None  # the cap: the fourth is refused, and counted
    place = os.path.dirname(kept[0])
    assert place.startswith(str(runtime)) and os.stat(place).st_mode & 0o777 == 0o700
    assert os.stat(os.path.dirname(place)).st_mode & 0o777 == 0o700
    assert "1 event(s) lost" in trouble.store_conditions(str(data_dir))[0]["reason"]
    assert trouble.first_notice(str(data_dir), "s", trouble.DISK_FULL, "disk full") is not None
    assert trouble.first_notice(str(data_dir), "s", trouble.DISK_FULL, "disk full") is None  # once a session
    assert trouble.first_notice(str(data_dir), "t", trouble.DISK_FULL, "disk full") is not None
    spool_dir = os.path.join(str(data_dir), "spool")
    assert trouble.drain(str(data_dir), spool_dir) == 3
    assert trouble.store_conditions(str(data_dir))[0]["state"] == "disk-full"  # until the database takes a write
    trouble.clear(str(data_dir))
    assert trouble.store_conditions(str(data_dir)) == []
    [name] = os.listdir(spool_dir)
    with open(os.path.join(spool_dir, name), encoding="utf-8") as handle:
        assert [json.loads(line)["payload"] for line in handle] == [record["payload"]] * 3  # one file, 3 lines


def test_a_worker_that_takes_the_hooks_events_on_a_full_disk_keeps_them_too(small_disk, monkeypatch):
    """Post-tool hooks hand their payload to a running worker (capture/handoff.py): on a full disk the
    worker keeps the event outside the data dir the same way, and the hook still shows the line once."""
    from claude_mem.runtime import control, discovery
    from test_worker_lifecycle import cli

    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "0")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")
    data_dir = str(small_disk)
    assert run_hook("session-start", load("session-edit/01-SessionStart.json")).returncode == 0
    cli("worker", "start")
    try:
        filler = fill(os.path.dirname(data_dir), leave=16 * 1024)
        results = [run_hook("post-tool", tool_payload(index), timeout=120) for index in range(40)]
        assert all(r.returncode == 0 and b"Traceback" not in r.stderr for r in results)
        told = [json.loads(r.stdout)["systemMessage"] for r in results if r.stdout.strip()]
        assert 1 <= len(told) <= 5 and all("full" in line for line in told), told
        worker_pid = discovery.read_info(data_dir)["pid"]
        kept_by_worker = [path for path in trouble.waiting_files(data_dir)
                          if os.path.basename(path).split("-")[1] == str(worker_pid)]
        assert kept_by_worker  # the worker took them (the handoff), not the hooks' own processes
        os.unlink(filler)
        subprocess.run(["mount", "-o", "remount,size=16m", os.path.dirname(data_dir)], check=True)
    finally:
        control.stop(data_dir, timeout=20)
    ingest(data_dir)
    stored = rows(data_dir, "SELECT COUNT(*) FROM pending_events WHERE kind IN ('tool', 'tool_failure')")[0][0]
    print(json.dumps({"handed_over_hooks": 40, "kept_by_the_worker": len(kept_by_worker), "stored_after": stored,
                      "notices": len(told)}))
    assert stored == 40
