"""Never lose, never block: a busy, locked or damaged database sends events to the spool, and
`spool.ingest` brings every one of them into the database exactly once."""

import contextlib
import json
import os
import subprocess
import sys
import time

from claude_mem.capture import spool
from claude_mem.store import capture, db
from conftest import REPO
from hook_support import events, fixture_files, hook_for, load, rows, run_hook

HOLD_LOCK = """
import sys, time
sys.path.insert(0, sys.argv[1])
from claude_mem.store import db
conn = db.connect(db.db_path(sys.argv[2]))
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[3]))
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def write_lock(data_dir, seconds: float):
    """Another process holding the database's write lock (BEGIN IMMEDIATE) for `seconds`."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, os.path.join(REPO, "src"), str(data_dir), str(seconds)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait(timeout=30)


def worker_connection(data_dir):
    return db.connect(db.db_path(str(data_dir)))


def test_locked_database_spools_and_ingest_restores_everything(data_dir):
    payloads = [load(path) for path in fixture_files("session-edit")]
    with write_lock(data_dir, 30):
        for payload in payloads:
            started = time.monotonic()
            result = run_hook(hook_for(payload), payload)
            assert time.monotonic() - started < 10  # bounded (the budget itself is measured in bench/)
            assert (result.returncode, result.stderr) == (0, b"")
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions") == [(0,)]
    files = spool.pending_files(str(data_dir))
    assert len(files) == len(payloads)
    for path in files:
        [line] = open(path, encoding="utf-8").read().splitlines()
        record = json.loads(line)
        assert {"kind", "content_session_id", "project", "cwd", "event_key", "payload", "captured_at"} <= set(record)
    assert "spooled" in open(os.path.join(data_dir, "logs", "hooks.log")).read()
    conn = worker_connection(data_dir)
    try:
        assert capture.ingest_spool(conn, str(data_dir)) == len(payloads)
        assert capture.ingest_spool(conn, str(data_dir)) == 0
    finally:
        conn.close()
    assert spool.pending_files(str(data_dir)) == []
    assert [e["kind"] for e in events(data_dir)] == [
        "prompt", "tool", "tool", "tool", "tool", "summarize", "session_end",
    ]
    assert rows(data_dir, "SELECT prompt_number, text FROM prompts") == [(1, "edit hello.txt")]


def test_ingest_deduplicates_against_the_database_and_itself(data_dir):
    payload = load("session-edit/06-PostToolUse.Bash.json")
    run_hook("post-tool", payload)  # committed
    with write_lock(data_dir, 30):
        run_hook("post-tool", payload)  # the same event again, spooled
        run_hook("post-tool", payload)
        run_hook("post-tool", {**payload, "tool_use_id": "toolu_new"})
    assert len(spool.pending_files(str(data_dir))) == 3
    conn = worker_connection(data_dir)
    try:
        assert capture.ingest_spool(conn, str(data_dir)) == 1
    finally:
        conn.close()
    assert [e["event_key"] for e in events(data_dir)] == [payload["tool_use_id"], "toolu_new"]


def test_claimed_files_of_a_dead_ingest_are_picked_up_and_damaged_lines_quarantined(data_dir):
    payload = load("session-edit/06-PostToolUse.Bash.json")
    with write_lock(data_dir, 30):
        run_hook("post-tool", payload)
    [path] = spool.pending_files(str(data_dir))
    os.rename(path, path + spool.CLAIMED)  # an ingest died after claiming it
    damaged = os.path.join(data_dir, "spool", "99999999999999999999-1-1.jsonl")
    with open(damaged, "w") as handle:
        handle.write('{"kind": "tool", "content_session_id": "x", "trunc\n')
    conn = worker_connection(data_dir)
    try:
        assert capture.ingest_spool(conn, str(data_dir)) == 1
    finally:
        conn.close()
    assert spool.pending_files(str(data_dir)) == []
    assert len(os.listdir(data_dir / "quarantine")) == 1
    assert len(events(data_dir)) == 1


def test_damaged_database_file_spools(data_dir):
    os.makedirs(data_dir)
    with open(db.db_path(str(data_dir)), "wb") as handle:
        handle.write(b"this is not a sqlite database" * 100)
    payload = load("session-edit/02-UserPromptSubmit.json")
    result = run_hook("user-prompt", payload)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    [path] = spool.pending_files(str(data_dir))
    assert json.loads(open(path).read())["payload"]["prompt"] == "edit hello.txt"


def test_private_turn_survives_a_spooled_prompt(data_dir):
    """The prompt is spooled, the tool call after it is not: the turn must stay private anyway."""
    prompt = {**load("session-edit/02-UserPromptSubmit.json"), "prompt": "<private>PRIVATE-CANARY-771</private>"}
    run_hook("session-start", load("session-edit/01-SessionStart.json"))
    with write_lock(data_dir, 30):
        run_hook("user-prompt", prompt)
    tool = load("session-edit/06-PostToolUse.Bash.json")
    run_hook("post-tool", tool)
    run_hook("stop", load("session-edit/07-Stop.json"))
    assert events(data_dir) == []
    conn = worker_connection(data_dir)
    try:
        capture.ingest_spool(conn, str(data_dir))
    finally:
        conn.close()
    assert rows(data_dir, "SELECT prompt_number, text, private FROM prompts") == [(1, "", 1)]
    assert events(data_dir) == []
    run_hook("user-prompt", {**prompt, "prompt": "a public prompt", "prompt_id": "next"})
    run_hook("post-tool", {**tool, "tool_use_id": "toolu_public"})
    assert [e["kind"] for e in events(data_dir)] == ["prompt", "tool"]


def test_status_counts_spooled_and_quarantined(data_dir):
    from click.testing import CliRunner

    from claude_mem.cli import cli

    with write_lock(data_dir, 30):
        run_hook("post-tool", load("session-edit/06-PostToolUse.Bash.json"))
    run_hook("post-tool", b"not json")
    result = CliRunner().invoke(cli, ["status", "--json"])
    assert result.exit_code == 0, result.output
    capture = json.loads(result.output)["capture"]
    assert (capture["spooled"], capture["quarantined"]) == (1, 1)
    text = " ".join(CliRunner().invoke(cli, ["status"]).output.split())  # rich wraps long lines
    assert "1 event(s) spooled" in text and "1 bad input(s) quarantined" in text


def _spool_raw(data_dir, name: str, records: list) -> str:
    path = os.path.join(data_dir, "spool", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
    return path


def test_a_record_that_cannot_be_stored_is_quarantined_and_the_rest_ingested(data_dir):
    """Regression: one bad record used to stop the ingestion of every later record, for good."""
    payload = load("session-edit/06-PostToolUse.Bash.json")
    with write_lock(data_dir, 30):
        run_hook("post-tool", payload)
        run_hook("post-tool", {**payload, "tool_use_id": "toolu_later"})
    [good, later] = spool.pending_files(str(data_dir))
    record = json.loads(open(good, encoding="utf-8").read())
    # Sorted before the good files: a kind the schema refuses, and a prompt without its text.
    _spool_raw(data_dir, "00000000000000000001-1-1.jsonl",
               [{**record, "kind": "no-such-kind", "event_key": "bad-kind"}])
    _spool_raw(data_dir, "00000000000000000002-1-1.jsonl",
               [{**record, "kind": "prompt", "payload": {}, "event_key": "bad-prompt"},
                {**record, "event_key": "toolu_beside_the_bad_one"}])
    conn = worker_connection(data_dir)
    try:
        assert capture.ingest_spool(conn, str(data_dir)) == 3
        assert capture.ingest_spool(conn, str(data_dir)) == 0  # nothing left that blocks
    finally:
        conn.close()
    assert spool.pending_files(str(data_dir)) == []
    assert sorted(e["event_key"] for e in events(data_dir)) == sorted(
        [payload["tool_use_id"], "toolu_later", "toolu_beside_the_bad_one"])
    assert len(os.listdir(data_dir / "quarantine")) == 2
    log = open(os.path.join(data_dir, "logs", "hooks.log"), encoding="utf-8").read()
    assert "cannot store a no-such-kind record" in log and "cannot store a prompt record" in log
