"""Faults: a read-only data dir, and a database written by a newer claude-mem (issue 33, item 6).

Read-only (a tmpfs remounted `ro`: root ignores `chmod`): the session still gets its memory (the database
opened read-only), the hooks say once per session why capture is off, no "internal error"; the events wait
outside the data dir and come back when it is writable again. Newer schema: nothing is written to the
database (hooks spool, the CLI refuses with the version it needs), the session still gets its memory.
"""

import json
import os
import pathlib
import sqlite3
import subprocess
import sys

import pytest

from claude_mem.capture import spool, trouble
from claude_mem.store import capture, db
from fault_support import tmpfs_data_dir
from hook_support import load, run_hook
from test_recovery import seed_observations


def hook(name: str, payload: dict) -> dict | None:
    done = run_hook(name, payload, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and b"internal error" not in done.stderr, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def session_events(session_id: str) -> list[tuple[str, dict]]:
    """The recorded session-edit session's hooks, under `session_id`."""
    found = []
    for name in ("01-SessionStart.json", "02-UserPromptSubmit.json", "06-PostToolUse.Bash.json", "07-Stop.json"):
        payload = load(f"session-edit/{name}")
        payload["session_id"] = session_id
        found.append(({"01": "session-start", "02": "user-prompt", "06": "post-tool", "07": "stop"}[name[:2]], payload))
    return found


def count_events(data_dir: str) -> int:
    conn = sqlite3.connect(f"file:{db.db_path(data_dir)}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM pending_events").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def own_disk(tmp_path, monkeypatch):
    for mount in tmpfs_data_dir(tmp_path, monkeypatch, "32m"):
        yield pathlib.Path(mount)


def test_a_read_only_data_dir_still_gives_memory_and_says_once_why_capture_is_off(own_disk):
    data_dir = str(own_disk / "data")
    seed_observations(data_dir)
    before = count_events(data_dir)
    subprocess.run(["mount", "-o", "remount,ro", str(own_disk)], check=True)
    shown = []
    for name, payload in session_events("read-only-session"):
        output = hook(name, payload)
        if name == "session-start":
            assert output and output["hookSpecificOutput"]["additionalContext"].strip()
            assert "observation" in output["hookSpecificOutput"]["additionalContext"].lower() or \
                "#" in output["hookSpecificOutput"]["additionalContext"]
        if output and "read-only" in (output.get("systemMessage") or ""):
            shown.append(name)
    assert shown == ["session-start"], shown  # said once, where the session starts
    waiting = len(trouble.waiting_files(data_dir))
    conditions = trouble.store_conditions(data_dir)
    assert conditions[0]["state"] == "read-only", conditions
    status = subprocess.run([sys.executable, "-m", "claude_mem", "status"], capture_output=True, text=True, timeout=60)
    assert status.returncode == 0 and "read-only" in status.stdout, status.stdout + status.stderr

    subprocess.run(["mount", "-o", "remount,rw", str(own_disk)], check=True)
    again = load("session-edit/06-PostToolUse.Bash.json")
    again["session_id"], again["tool_use_id"] = "read-only-session", "toolu_after_rw"
    hook("post-tool", again)
    conn = db.connect(db.db_path(data_dir))
    try:
        capture.ingest_spool(conn, data_dir)
    finally:
        conn.close()
    added = count_events(data_dir) - before
    print(json.dumps({"read_only_events_kept": waiting, "stored_after_rw": added, "notices": len(shown)}))
    assert waiting == 4  # one record per hook: session-start, user-prompt, post-tool, stop
    assert added == 4 and not trouble.waiting_files(data_dir)


def test_a_newer_schema_is_never_written_and_still_read(data_dir):
    seed_observations(str(data_dir))
    path = db.db_path(str(data_dir))
    conn = sqlite3.connect(path)
    newer = db.SCHEMA_VERSION + 1
    conn.execute(f"PRAGMA user_version = {newer}")
    conn.close()
    with open(path, "rb") as handle:
        image = handle.read()
    before = count_events(str(data_dir))
    told = []
    for name, payload in session_events("newer-session"):
        output = hook(name, payload)
        if name == "session-start":
            assert output and output["hookSpecificOutput"]["additionalContext"].strip()
        if output and f"schema v{newer}" in (output.get("systemMessage") or ""):
            told.append(name)
    assert told == ["session-start"]
    assert "upgrade claude-mem" in json.dumps(trouble.store_conditions(str(data_dir), db.SCHEMA_VERSION))
    assert count_events(str(data_dir)) == before
    assert len(spool.pending_files(str(data_dir))) == 4  # every event kept for a build that can store it
    migrated = subprocess.run([sys.executable, "-m", "claude_mem", "migrate"], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    assert migrated.returncode != 0 and "Traceback" not in migrated.stderr
    message = migrated.stdout + migrated.stderr
    assert f"schema v{newer}, this build knows v{db.SCHEMA_VERSION}" in message and "upgrade claude-mem" in message
    with pytest.raises(db.NewerSchema):
        db.connect(path)
    worker = subprocess.run([sys.executable, "-m", "claude_mem", "worker", "start"], capture_output=True, text=True,
                            timeout=90, stdin=subprocess.DEVNULL,
                            env={**os.environ, "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_PROVIDER": "offline"})
    assert worker.returncode != 0 and "Traceback" not in worker.stderr  # it does not run on what it cannot write
    stopped = json.load(open(os.path.join(str(data_dir), "worker-stopped.json")))
    assert "upgrade claude-mem" in stopped["why"]
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == newer
    conn.close()
    print(json.dumps({"newer_schema": newer, "known": db.SCHEMA_VERSION, "spooled": 4,
                      "database_unchanged": image[:100] == open(path, "rb").read()[:100]}))


def test_reading_the_schema_version_keeps_this_process_locks(tmp_path):
    """`/health` reads the schema version in the worker, which holds the database open: a plain `open()`
    and `close()` of the file would drop the worker's POSIX locks, and the next process to close its
    connection would take itself for the last one and delete the `-shm` under the worker (disk I/O
    errors). Read through SQLite, the worker's locks hold."""
    import sqlite3
    import subprocess
    import sys

    from claude_mem.store import db as store_db

    path = str(tmp_path / "claude-mem.db")
    mine = store_db.connect(path)
    assert store_db.file_schema(path) == store_db.SCHEMA_VERSION
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
                    " c.execute('SELECT 1 FROM sqlite_master').fetchall(); c.close()", path], check=True)
    assert os.path.exists(path + "-shm")
    mine.execute("BEGIN IMMEDIATE")
    mine.execute("INSERT INTO counters (name, value) VALUES ('probe', 1)")
    mine.execute("COMMIT")
    mine.close()
    with sqlite3.connect(path) as again:
        assert again.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
