"""Everything claude-mem writes in the data dir is its user's alone (issue 11: the database and logs
were 0644): files 0600, directories 0700 — after hooks, the spool, quarantine, a worker, a backup."""

import json
import os
import stat

from hook_support import load, run_hook
from test_hooks_spool import write_lock
from test_worker_lifecycle import (
    cli,
    worker_env,  # noqa: F401  (a fixture)
)


def exposed(data_dir: str) -> list[str]:
    found = []
    for root, dirs, names in os.walk(data_dir):
        for name in dirs + names:
            path = os.path.join(root, name)
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if mode & 0o077:
                found.append(f"{os.path.relpath(path, data_dir)} {oct(mode)}")
    return found


def files(data_dir: str) -> set[str]:
    return {os.path.relpath(os.path.join(root, name), data_dir) for root, _dirs, names in os.walk(data_dir) for name in names}


def test_no_file_in_the_data_dir_is_readable_by_others(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    session = load("session-edit/01-SessionStart.json")
    tool = load("session-edit/06-PostToolUse.Bash.json")
    assert run_hook("session-start", session).returncode == 0
    assert run_hook("post-tool", tool).returncode == 0
    assert run_hook("post-tool", b"{not json").returncode == 0  # quarantine
    with write_lock(worker_env, 30):
        assert run_hook("post-tool", {**tool, "tool_use_id": "toolu_spooled"}).returncode == 0  # spool
    cli("settings", "set", "max_attempts", "4")
    seen = files(data_dir)
    assert {"claude-mem.db", "settings.json"} <= seen
    assert any(p.startswith("spool") for p in seen) and any(p.startswith("quarantine") for p in seen)
    assert any(p.startswith("logs") for p in seen)
    assert not exposed(data_dir), json.dumps(exposed(data_dir), indent=1)
    cli("worker", "start")
    cli("backup")
    cli("worker", "stop")
    assert any(p.startswith("backups") for p in files(data_dir))
    assert not exposed(data_dir), json.dumps(exposed(data_dir), indent=1)
