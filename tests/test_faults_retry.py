"""Failed events come back (issue 33, item 8): an event that failed for a transient reason — the worker
killed mid-batch until its attempts ran out, the provider failing or timing out, a lease run out — is
retried by the worker with a growing wait, after its next start and on a slow schedule while it runs;
one that failed for a reason in its content (the observer's reply unparseable for it, a request the
provider refuses) stays failed, listed with the reason. Real SQLite, the real pipeline, a real worker
killed with SIGKILL."""

import asyncio
import json

import pytest

from claude_mem.observer.pipeline import Pipeline
from claude_mem.store import db, migrations, queue
from claude_mem.store.models import Batch
from claude_mem.store.retry_schema import TRANSIENT_ERRORS
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_session, connect, drain
from test_crash_attempts import event_row, kill_worker
from test_worker_app import make_ctx
from test_worker_lifecycle import (
    cli,
    wait_for,
    worker_env,  # noqa: F401  (a fixture)
    )

BASE = 2.0  # retry_backoff_seconds: the first revival waits BASE × REVIVAL_WAIT_FACTOR


def seed(conn, sessions: int = 1, events: int = 3, tag: str = "t") -> list[int]:
    ids = []
    for s in range(sessions):
        session = add_session(conn, f"{tag}-session-{s}")
        for n in range(events):
            ids.append(add_event(conn, session, "tool", {"tool_name": "Bash", "tool_input": {"command": f"make {n}"},
                                                         "tool_response": {"stdout": f"step {n} ok"}}, f"{tag}-{s}-{n}"))
    return ids


def fail_all(conn, failure_class: str, error: str, now: float) -> None:
    while (batch := queue.claim_batch(conn, lease_seconds=300, max_events=20, max_chars=100_000, max_attempts=1,
                                      now=now)) is not None:
        queue.fail_batch(conn, batch, error, max_attempts=1, backoff_base=BASE, now=now, failure_class=failure_class)


def statuses(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())


def test_transient_failures_come_back_with_a_growing_wait_and_a_bound(data_dir):
    conn = connect(data_dir)
    ids = seed(conn)
    now = 1_800_000_000.0
    fail_all(conn, queue.TRANSIENT, "ProviderError: observer: request timed out", now)
    assert statuses(conn) == {"failed": len(ids)}
    wait = BASE * queue.REVIVAL_WAIT_FACTOR
    revived_at = []
    for revival in range(queue.MAX_REVIVALS):
        due = now + wait * 4 ** revival
        assert queue.revive_transient(conn, backoff_base=BASE, now=due - 1) == 0  # not yet
        assert queue.revive_transient(conn, backoff_base=BASE, now=due + 0.01) == len(ids)
        assert statuses(conn) == {"pending": len(ids)}
        assert {row[1] for row in (event_row(data_dir, i) for i in ids)} == {0}  # fresh attempts
        revived_at.append(due)
        now = due
        fail_all(conn, queue.TRANSIENT, "lease expired mid-batch", now)
    # out of rounds: stays failed, listed as such
    assert queue.revive_transient(conn, backoff_base=BASE, now=now + 10**9) == 0
    listed = queue.list_events(conn, ("failed",))
    assert {(row["failure_class"], row["revivals"]) for row in listed} == {("transient", queue.MAX_REVIVALS)}
    assert not any(failure["comes_back"] for failure in queue.recent_failures(conn))
    # a user's retry starts over
    assert queue.retry(conn) == len(ids)
    assert conn.execute("SELECT MAX(revivals), COUNT(failure_class) FROM pending_events").fetchone() == (0, 0)


def test_content_failures_stay_failed_with_their_reason(data_dir):
    conn = connect(data_dir)
    ids = seed(conn)
    fail_all(conn, queue.CONTENT, "MalformedReply: reply had no valid block", 1_800_000_000.0)
    assert queue.revive_transient(conn, backoff_base=BASE, now=1_800_000_000.0 + 10**9) == 0
    assert statuses(conn) == {"failed": len(ids)}
    failures = queue.recent_failures(conn, 10)
    assert {(f["failure_class"], f["comes_back"]) for f in failures} == {("content", False)}
    with pytest.raises(ValueError):
        queue.fail_batch(conn, Batch(session_id=1, content_session_id="x", project="p", cwd="", events=(),
                                           lease=""), "x", max_attempts=1, backoff_base=1, failure_class="maybe")


@pytest.mark.parametrize(("script", "expected"), [
    ({"default": "malformed"}, "content"),           # the reply for these events never parses
    ({"steps": [{"error": "fatal"}] * 20}, "content"),  # a request the provider refuses (4xx)
    ({"poison": "make"}, "transient"),                # a retryable provider error every time
])
def test_the_pipeline_records_why_events_failed(data_dir, script, expected):
    conn = connect(data_dir)
    ids = seed(conn)
    values = make_ctx(data_dir).settings
    values.update(retry_backoff_seconds=0.0, max_attempts=2)
    pipeline = Pipeline(conn, values, FakeProvider(values, script=script))
    asyncio.run(drain(pipeline))
    pipeline.close()
    rows = conn.execute("SELECT status, failure_class FROM pending_events WHERE id IN (%s)" % ",".join("?" * len(ids)),
                        ids).fetchall()
    assert set(rows) == {("failed", expected)}, rows


def test_the_migration_classes_events_that_already_failed(data_dir):
    conn = db.connect(db.db_path(str(data_dir)), migrate=False)
    migrations.migrate(conn, target=20)
    session = add_session(conn, "old")
    errors = {
        "lease expired mid-batch (worker stopped?) after 3 attempt(s)": "transient",
        "the worker stopped mid-batch (killed or crashed) during attempt 3 of 3": "transient",
        "ProviderError: anthropic: request timed out": "transient",
        "StoreError: database is locked": "transient",
        "MalformedReply: reply had no valid block and no <skip/>: 'garbage'": "content",
        "MissingSummary: the observer's reply had no <summary> for this turn after 3 request(s)": "content",
    }
    for index, error in enumerate(errors):
        event = add_event(conn, session, "tool", {"tool_name": "Bash"}, f"old-{index}")
        conn.execute("UPDATE pending_events SET status = 'failed', attempts = 3, last_error = ?,"
                     " processed_at = '2026-01-02T03:04:05.000Z' WHERE id = ?", (error, event))
    done = add_event(conn, session, "tool", {"tool_name": "Bash"}, "old-done")
    conn.execute("UPDATE pending_events SET status = 'done' WHERE id = ?", (done,))
    assert migrations.migrate(conn) == ["m021_failure_class"]
    found = dict(conn.execute("SELECT last_error, failure_class FROM pending_events WHERE status = 'failed'"))
    assert found == errors
    assert conn.execute("SELECT failure_class, revivals FROM pending_events WHERE id = ?", (done,)).fetchone() == (None, 0)
    assert len(TRANSIENT_ERRORS) >= 4
    # an old transient failure is due at the next worker start
    assert queue.revive_transient(conn, backoff_base=BASE) == 4


def test_kill_9_until_attempts_run_out_then_start_again_loses_nothing(worker_env, tmp_path, monkeypatch):  # noqa: F811
    """The worker is killed mid-batch until the batch's events have used every attempt; the next worker
    finds them failed (transient), waits the first revival wait and observes every event."""
    log = tmp_path / "fake.log"
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "fake")
    monkeypatch.setenv("CLAUDE_MEM_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("CLAUDE_MEM_MAX_OBSERVERS", "1")
    monkeypatch.setenv("CLAUDE_MEM_RETRY_BACKOFF_SECONDS", "0.1")  # the first revival after 3 s
    monkeypatch.setenv("CLAUDE_MEM_FAKE_SCRIPT", json.dumps({"delay": 60, "log": str(log)}))
    with connect(str(worker_env)) as conn:
        ids = seed(conn, sessions=2, events=3, tag="kill")
    kills = 0
    while True:
        cli("worker", "start")
        kills += 1
        wait_for(lambda kills=kills: log.exists() and log.read_text().count('"start"') >= kills, message=f"claim {kills}")
        kill_worker(worker_env)
        conn = connect(str(worker_env))
        spent = conn.execute("SELECT MAX(attempts) FROM pending_events WHERE status = 'claimed'").fetchone()[0]
        conn.close()
        if spent == 3:
            break
        assert kills < 10
    monkeypatch.setenv("CLAUDE_MEM_FAKE_SCRIPT", json.dumps({"delay": 0, "log": str(log)}))
    cli("worker", "start")
    try:
        conn = connect(str(worker_env))
        # the claims of the dead worker end failed (transient) at the start; listed as coming back
        wait_for(lambda: statuses(conn).get("failed", 0) > 0 or statuses(conn) == {"done": len(ids)},
                 timeout=30, message="the stale claims failed or redone")
        listing = cli("queue", "--status", "failed").stdout
        if "failed" in statuses(conn):
            assert "transient: the worker retries it by itself" in listing, listing
        wait_for(lambda: statuses(conn) == {"done": len(ids)}, timeout=60, message="every event observed")
        assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 1
        assert conn.execute("SELECT MAX(revivals) FROM pending_events").fetchone()[0] == 1
        conn.close()
    finally:
        cli("worker", "stop")
    worker_log = (worker_env / "logs" / "worker.log").read_text(errors="replace")
    assert "failed for a transient reason" in worker_log
