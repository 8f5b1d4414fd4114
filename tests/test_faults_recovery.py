"""Fault: the database file is emptied (0 bytes) beside a good backup (issue 33, item 2).

Whoever opens the store first — the session-start hook (which autostarts the worker), the worker, or the
CLI — restores the backup before anything writes: every session of the backup is there afterwards, the
new event too, and the restore happened once (one `claude-mem.db.corrupt-*` copy, one recovery.json).
"""

import json
import os
import subprocess
import sys

import pytest

from claude_mem.store import db
from hook_support import load, run_hook
from test_recovery import SESSIONS, build, keys
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "claude_mem", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def emptied(data_dir: str) -> str:
    """Good memory, a backup of it (`claude-mem backup`), then the database truncated to 0 bytes."""
    path = db.db_path(data_dir)
    build(path)
    made = cli("backup")
    assert made.returncode == 0, made.stderr
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    os.truncate(path, 0)
    return path


def session_start(session_id: str, autostart: bool = False) -> subprocess.CompletedProcess:
    payload = load("session-edit/01-SessionStart.json")
    payload["session_id"] = session_id
    done = run_hook("session-start", payload, env={"CLAUDE_MEM_AUTOSTART": "true" if autostart else "false"},
                    timeout=120)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return done


def assert_restored_once(data_dir: str, path: str, new_sessions: int) -> dict:
    sessions = keys(path, "SELECT content_session_id FROM sessions")
    assert len(sessions) == SESSIONS + new_sessions, len(sessions)
    aside = [name for name in os.listdir(data_dir) if name.startswith("claude-mem.db.corrupt-")
             and not name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1, aside  # one restore, whoever came first
    record = json.load(open(os.path.join(data_dir, "recovery.json")))
    assert record["restored_from"] and record["problem"] == "the database is empty"
    return {"sessions_before": SESSIONS, "sessions_after": len(sessions), "restores": len(aside)}


def test_hook_first_restores_before_it_writes_and_the_worker_it_starts_does_not_again(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    path = emptied(data_dir)
    session_start("after-the-loss", autostart=False)  # the normal order: this hook, then the worker it starts
    started = cli("worker", "start")  # (started here: the plugin's autostart would first build its venv)
    assert started.returncode == 0, started.stderr
    figures = assert_restored_once(data_dir, path, new_sessions=1)
    assert "restored" in cli("status").stdout
    print(json.dumps({"order": "hook first", **figures}))


@pytest.mark.parametrize("first", [("worker", "start"), ("migrate",)], ids=["worker first", "cli first"])
def test_worker_or_cli_first_restores_and_the_hook_after_finds_a_good_database(worker_env, first):  # noqa: F811
    data_dir = str(worker_env)
    path = emptied(data_dir)
    done = cli(*first)
    assert done.returncode == 0, done.stderr
    session_start("after-the-loss")
    print(json.dumps({"order": f"{first[0]} first", **assert_restored_once(data_dir, path, new_sessions=1)}))


def test_hooks_at_once_restore_once(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    path = emptied(data_dir)
    hooks = [subprocess.Popen([sys.executable, "-m", "claude_mem", "hook", "session-start"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "CLAUDE_MEM_AUTOSTART": "false"}) for _ in range(6)]
    for number, hook in enumerate(hooks):
        payload = load("session-edit/01-SessionStart.json")
        payload["session_id"] = f"at-once-{number}"
        _out, err = hook.communicate(json.dumps(payload).encode(), timeout=120)
        assert hook.returncode == 0 and b"Traceback" not in err, err
    print(json.dumps({"order": "6 hooks at once", **assert_restored_once(data_dir, path, new_sessions=6)}))
