"""`claude-mem statusline` (issue 13): one short line for Claude Code's status bar, from any input,
never an error — run the way Claude Code runs it (a subprocess fed the statusLine JSON)."""

import json
import os
import subprocess
import sys
import time

import pytest

from claude_mem.store import db
from conftest import REPO
from observer_support import add_event
from recall_seed import add_observation, add_session, git_project

LAUNCHER = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "statusline.py")]
CONSOLE = [sys.executable, "-m", "claude_mem", "statusline"]


def status(stdin: bytes, command: list[str] = LAUNCHER) -> str:
    done = subprocess.run(command, input=stdin, capture_output=True, timeout=60, env={**os.environ})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 120, lines
    return lines[0]


@pytest.fixture
def workspace(tmp_path, data_dir):
    cwd, key = git_project(tmp_path)
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "status-session", key)
    for n in range(12):
        add_observation(conn, key, f"Observation number {n} about the parser", session_id=session)
    add_observation(conn, "/somewhere/else", "Not this project")
    events = [add_event(conn, session, "tool", {"tool_name": "Read"}, f"ev-{n}") for n in range(4)]
    conn.execute("UPDATE pending_events SET status = 'failed', attempts = 3 WHERE id = ?", (events[0],))
    conn.commit()
    conn.close()
    return cwd


@pytest.mark.parametrize("command", [LAUNCHER, CONSOLE])
def test_the_line_counts_this_projects_notes_the_queue_and_failures(workspace, command):
    payload = {"session_id": "s", "cwd": "/", "workspace": {"current_dir": workspace, "project_dir": workspace},
               "model": {"id": "claude-opus-4", "display_name": "Opus"}}
    assert status(json.dumps(payload).encode(), command) == \
        "memory: 12 notes · 3 queued · 1 failed (claude-mem queue) · worker stopped"


def test_without_a_database_it_says_so(data_dir):
    assert status(b'{"cwd": "/tmp"}') == "memory: starting (nothing stored yet)"


@pytest.mark.parametrize("stdin", [b"", b"not json", b"\xff\xfe\x00binary", b"[1, 2]", b'{"cwd": 5}',
                                   b'{"workspace": "x"}', b'{"cwd": "' + b"a" * 2_000_000 + b'"}'])
def test_any_input_gives_one_line(workspace, stdin):
    assert status(stdin).startswith("memory:")


def test_a_damaged_database_gives_a_line_not_an_error(data_dir):
    os.makedirs(data_dir, exist_ok=True)
    with open(db.db_path(str(data_dir)), "wb") as handle:
        handle.write(b"this is not a database" * 100)
    assert status(b"{}").startswith("memory:")


def test_help_says_how_to_configure_it():
    done = subprocess.run(CONSOLE + ["--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and '"statusLine"' in done.stdout


def test_a_running_worker_names_its_observer(workspace, data_dir):
    """worker.json of a live process that reports its observer: the line names it."""
    with open(os.path.join(str(data_dir), "worker.json"), "w", encoding="utf-8") as handle:
        json.dump({"pid": os.getpid(), "port": 1, "provider": {"name": "claude"}}, handle)
    assert status(json.dumps({"cwd": workspace}).encode()).endswith(" · observer claude")


def test_the_line_loads_only_what_it_reads(workspace):
    """Run every few hundred ms: no recall, observer, logging, dataclasses or typing when the worker is stopped."""
    done = subprocess.run([*LAUNCHER[:1], "-X", "importtime", *LAUNCHER[1:]], capture_output=True, timeout=60,
                          input=json.dumps({"cwd": workspace}).encode(), env={**os.environ})
    assert done.stdout.decode().startswith("memory: 12 notes"), done
    loaded = [line.rpartition("|")[2].strip() for line in done.stderr.decode().splitlines() if "|" in line]
    assert "claude_mem.store.status_line" in loaded
    heavy = [name for name in loaded if name.startswith(("claude_mem.recall", "claude_mem.observer"))
             or name in ("logging", "dataclasses", "typing", "claude_mem.store.stats", "claude_mem.store.caught_late")]
    assert heavy == []


def imported(stdin: bytes) -> tuple[str, list[str]]:
    """The line, and every module the status line imported to print it."""
    done = subprocess.run([*LAUNCHER[:1], "-X", "importtime", *LAUNCHER[1:]], capture_output=True, timeout=60,
                          input=stdin, env={**os.environ})
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip(), [row.rpartition("|")[2].strip() for row in done.stderr.decode().splitlines()
                                          if "|" in row]


def test_an_unchanged_database_is_not_read_again(workspace, data_dir):
    """Between two writes every run would count the same: the second run takes the counts from the cache,
    without loading sqlite3 at all; another directory has its own entry."""
    stdin = json.dumps({"cwd": workspace}).encode()
    status(stdin)  # a read-only open makes the WAL file a writer would have made
    time.sleep(0.1)  # the database settles (counts read in the clock tick of a write are never kept)
    first, loaded = imported(stdin)
    assert first.startswith("memory: 12 notes") and "_sqlite3" in loaded
    again, loaded = imported(stdin)
    assert again == first and "_sqlite3" not in loaded and "claude_mem.store" not in loaded
    elsewhere, loaded = imported(json.dumps({"cwd": "/"}).encode())
    assert elsewhere.startswith("memory: 0 notes") and "_sqlite3" in loaded
    line, loaded = imported(stdin)  # still cached beside the other directory's entry
    assert line == first and "_sqlite3" not in loaded


def test_every_write_is_seen_at_the_next_run(workspace, data_dir):
    """The cache never hides a change: a note added right after a run (same clock tick or not) is counted
    by the next one, twenty times in a row; a damaged cache file is just recounted."""
    stdin = json.dumps({"cwd": workspace}).encode()
    key = db.connect(db.db_path(str(data_dir)))
    project = key.execute("SELECT project FROM observations ORDER BY id LIMIT 1").fetchone()[0]
    key.close()
    for n in range(20):
        assert status(stdin).startswith(f"memory: {12 + n} notes")
        conn = db.connect(db.db_path(str(data_dir)))
        add_observation(conn, project, f"Written right after run {n}")
        conn.close()
        if n % 5 == 4:
            time.sleep(0.1)  # and sometimes after the database settled, so that a cached entry exists
    cache = os.path.join(str(data_dir), "cache", "statusline.json")
    assert os.path.exists(cache) and os.stat(cache).st_mode & 0o777 == 0o600
    with open(cache, "w", encoding="utf-8") as handle:
        handle.write('{"' + workspace + '\\u0000": {"signature": "x", "counts": [1, 2]}, "[')
    assert status(stdin).startswith("memory: 32 notes")
