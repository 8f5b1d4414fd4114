"""The plugin's hook commands as hooks/hooks.json declares them, run the way Claude Code runs them.

Shared by the benchmarks and the tests (`tests/hook_support.py`): one reading of hooks.json.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS_JSON = os.path.join(REPO, "hooks", "hooks.json")


def hook_handler(hook: str) -> dict:
    """hooks.json's handler for `hook`: its `command` (`${CLAUDE_PLUGIN_ROOT}` unresolved) and `timeout`."""
    with open(HOOKS_JSON, encoding="utf-8") as handle:
        config = json.load(handle)
    for groups in config["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                if shlex.split(handler["command"])[-1] == hook:
                    return handler
    raise KeyError(hook)


def hook_command(hook: str = "post-tool") -> str:
    """The shell command hooks.json runs for `hook`."""
    return hook_handler(hook)["command"]


def plugin_command(hook: str) -> list[str]:
    """The argv hooks.json runs for `hook`, with ${CLAUDE_PLUGIN_ROOT} resolved and `python3` → this interpreter."""
    argv = shlex.split(hook_command(hook).replace("${CLAUDE_PLUGIN_ROOT}", REPO))
    return [sys.executable, *argv[1:]]


def run_hook(hook: str, stdin: bytes | dict, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run one hook exactly as the plugin does (launcher, -I -S); `env` is laid over this process's
    environment, which says the data dir unless `env` does."""
    data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
    full_env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false", **(env or {})}
    return subprocess.run(plugin_command(hook), input=data, capture_output=True, env=full_env, timeout=timeout)


class Measured(NamedTuple):
    returncode: int | None  # None: killed at the timeout
    stdout: bytes
    stderr: bytes
    cpu_s: float  # user + system of the child, from its own rusage
    wall_s: float


def run_measured(argv: list[str], stdin: bytes, env: dict, timeout: float = 60) -> Measured:
    """Run `argv` with `stdin` and report the child's own CPU time (`os.wait4`), killed past `timeout`."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write(stdin)
        given.seek(0)
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdin=given, stdout=out, stderr=err, env=env)
        killed = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout and not killed:
                process.kill()
                killed = True
            time.sleep(0.002)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Measured(None if killed else process.returncode, out.read(), err.read(),
                        usage.ru_utime + usage.ru_stime, wall)
