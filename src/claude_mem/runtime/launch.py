"""Starting a detached worker process with the spawn hygiene of DESIGN §7. Stdlib only (hooks use it).

The caller holds the exclusive worker lock and hands its fd to the child, which keeps holding it for
its whole life: between "no worker is running" and "the new worker runs" the lock is never free, so
concurrent starters cannot both spawn one.
"""

from __future__ import annotations

import os
import subprocess

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Mapping

# Variables tied to the Claude Code session that ran the hook; the worker outlives that session.
SESSION_VARS = (
    "CLAUDECODE", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE", "CLAUDE_PID", "CLAUDE_EFFORT",
    "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN",
)


def scrubbed_env(environ: Mapping[str, str], anthropic_base_url: str = "",
                 pythonpath: str | None = None) -> dict[str, str]:
    """A copy of `environ` without Claude Code's session variables, plugin variables, or an inherited
    ANTHROPIC_BASE_URL (a worker must not follow a session's proxy unless claude-mem is told to)."""
    env: dict[str, str] = {}
    for name, value in environ.items():
        if name in SESSION_VARS or name.startswith("CLAUDE_PLUGIN_") or name == "ANTHROPIC_BASE_URL":
            continue
        env[name] = value
    if anthropic_base_url:
        env["ANTHROPIC_BASE_URL"] = anthropic_base_url
    if pythonpath:
        current = env.get("PYTHONPATH")
        env["PYTHONPATH"] = pythonpath + (os.pathsep + current if current else "")
    return env


def stderr_log_path(data_dir: str) -> str:
    return os.path.join(data_dir, "logs", "worker-stderr.log")


def spawn(argv: list[str], data_dir: str, env: Mapping[str, str], pass_fd: int | None = None) -> int:
    """Start `argv` detached: its own session, stdin/stdout on /dev/null, stderr appended to the
    worker's stderr log, no other inherited fd, cwd the data dir. Returns the child's pid."""
    os.makedirs(os.path.join(data_dir, "logs"), mode=0o700, exist_ok=True)
    with open(stderr_log_path(data_dir), "ab") as err, open(os.devnull, "rb") as null_in, \
            open(os.devnull, "wb") as null_out:
        child = subprocess.Popen(
            argv, stdin=null_in, stdout=null_out, stderr=err, cwd=data_dir, env=env,
            start_new_session=True, close_fds=True, pass_fds=(pass_fd,) if pass_fd is not None else (),
        )
    return child.pid


def worker_argv(python: str, lock_fd: int | None = None) -> list[str]:
    argv = [python, "-m", "claude_mem.worker"]
    if lock_fd is not None:
        argv += ["--lock-fd", str(lock_fd)]
    return argv
