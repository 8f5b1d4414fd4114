"""A worker killed mid-batch uses up an attempt (issue 11: 6 attempts were seen with max_attempts 3):
an event that kills the worker every time ends `failed` after exactly `max_attempts` claims."""

import json
import os

import psutil

from claude_mem.runtime import discovery
from claude_mem.store import queue
from observer_support import add_event, add_session, connect
from test_worker_lifecycle import (
    cli,
    wait_for,
    worker_env,  # noqa: F401  (a fixture)
    worker_processes,
)


def seed(data_dir) -> int:
    with connect(str(data_dir)) as conn:
        session = add_session(conn, "crashing")
        event = add_event(conn, session, "tool", {"tool_name": "Bash", "tool_input": {"command": "make"},
                                                  "tool_response": {"stdout": "ok"}}, "crash-1")
    return event


def event_row(data_dir, event_id: int) -> tuple:
    conn = connect(str(data_dir))
    try:
        return conn.execute("SELECT status, attempts, last_error FROM pending_events WHERE id = ?", (event_id,)).fetchone()
    finally:
        conn.close()


def kill_worker(data_dir) -> None:
    """SIGKILL the data dir's worker and wait until it is gone (its worker.json removed, as a next start would)."""
    pid = discovery.read_info(str(data_dir))["pid"]
    psutil.Process(pid).kill()
    psutil.Process(pid).wait(10)
    assert not worker_processes(data_dir)
    discovery.remove_info(str(data_dir), pid=pid)


def test_a_claim_left_by_a_dead_worker_counts_and_fails_at_the_limit(data_dir):
    event = seed(data_dir)
    conn = connect(str(data_dir))
    for attempt in (1, 2, 3):
        batch = queue.claim_batch(conn, lease_seconds=300, max_events=5, max_chars=10_000, max_attempts=3)
        assert batch is not None and list(batch.ids) == [event]
        assert queue.release_stale_claims(conn, max_attempts=3) == 1  # the next worker starts
        status, attempts, error = event_row(data_dir, event)
        assert attempts == attempt and "stopped mid-batch" in error
        assert status == ("failed" if attempt == 3 else "pending")
    assert queue.claim_batch(conn, lease_seconds=300, max_events=5, max_chars=10_000, max_attempts=3) is None
    conn.close()


def test_kill_9_mid_batch_counts_as_an_attempt(worker_env, tmp_path, monkeypatch):  # noqa: F811
    log = tmp_path / "fake.log"
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "fake")
    monkeypatch.setenv("CLAUDE_MEM_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("CLAUDE_MEM_FAKE_SCRIPT", json.dumps({"delay": 60, "log": str(log)}))
    event = seed(worker_env)
    for kill in range(1, 5):
        cli("worker", "start")
        if kill <= 3:
            wait_for(lambda kill=kill: log.exists() and log.read_text().count('"start"') >= kill, message=f"claim {kill}")
        kill_worker(worker_env)
    status, attempts, error = event_row(worker_env, event)
    assert (status, attempts) == ("failed", 3), (status, attempts, error)
    assert "stopped mid-batch" in error
    assert log.read_text().count('"start"') == 3
    assert os.path.exists(str(worker_env))
