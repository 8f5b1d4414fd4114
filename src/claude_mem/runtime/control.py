"""Start, stop and inspect the worker from the command line (`claude-mem worker …`).

Stdlib at import time (the runtime package is shared with the hooks); `psutil`, which the worker's
environment always has, is imported by the functions that inspect other processes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass

from claude_mem import __version__, settings
from claude_mem.domain import ClaudeMemError
from claude_mem.runtime import discovery, launch

START_TIMEOUT = 30.0
STOP_TIMEOUT = 40.0


class WorkerError(ClaudeMemError):
    """The worker could not be started or stopped; the message says why and where to look."""


@dataclass(frozen=True)
class WorkerState:
    """What is true about the worker of one data dir right now."""

    data_dir: str
    running: bool
    pid: int | None = None
    port: int | None = None
    info: dict[str, object] | None = None
    health: dict[str, object] | None = None
    reason: str = ""

    @property
    def url(self) -> str | None:
        return f"http://127.0.0.1:{self.port}" if self.port else None

    def as_dict(self) -> dict[str, object]:
        return {
            "data_dir": self.data_dir, "running": self.running, "pid": self.pid, "port": self.port,
            "url": self.url, "reason": self.reason, "info": self.info, "health": self.health,
            "recovery": discovery.read_recovery(self.data_dir),
        }


def lock_holder(data_dir: str) -> int | None:
    """The pid the worker wrote into worker.lock, if any process still holds that lock."""
    if not discovery.lock_held(data_dir):
        return None
    try:
        with open(discovery.lock_path(data_dir), encoding="utf-8") as handle:
            pid = int(handle.read().strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if discovery.pid_alive(pid) else None


def state(data_dir: str | None = None, timeout: float = 2.0) -> WorkerState:
    directory = data_dir or settings.data_dir()
    info = discovery.read_info(directory)
    if info is None:
        holder = lock_holder(directory)
        if holder is not None:
            return WorkerState(directory, False, pid=holder, reason="starting or stopping (holds the lock, not serving)")
        return WorkerState(directory, False, reason="not running")
    pid, port = info["pid"], info["port"]
    if not discovery.pid_alive(pid) or is_zombie(pid):
        return WorkerState(directory, False, info=info, reason=f"stale worker.json (pid {pid} is gone)")
    health = discovery.probe_health(port, timeout=timeout)
    if health is None:
        return WorkerState(directory, False, pid, port, info, reason=f"pid {pid} does not answer on port {port}")
    if health.get("data_dir") != directory:
        return WorkerState(directory, False, pid, port, info, health,
                           reason=f"port {port} is served by the worker of {health.get('data_dir')}")
    return WorkerState(directory, True, pid, port, info, health)


def is_zombie(pid: int) -> bool:
    """A zombie is dead for our purposes; reap it if it is our own child."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def gone(pid: int) -> bool:
    return not discovery.pid_alive(pid) or is_zombie(pid)


def start(data_dir: str | None = None, timeout: float = START_TIMEOUT) -> tuple[WorkerState, bool]:
    """Make sure a worker runs for the data dir; returns its state and whether this call started it."""
    directory = data_dir or settings.data_dir()
    current = state(directory)
    if current.running:
        return current, False
    fd = discovery.try_lock(directory)
    child: int | None = None
    if fd is not None:  # nobody runs or starts a worker: we do, handing the held lock to the child
        values = settings.load(directory)
        env = launch.scrubbed_env(dict(os.environ), str(values.get("anthropic_base_url") or ""))
        try:
            child = launch.spawn(launch.worker_argv(sys.executable, fd), directory, env, pass_fd=fd)
        finally:
            os.close(fd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = state(directory, timeout=1.0)
        if current.running:
            return current, child is not None and current.pid == child
        if child is not None and gone(child):
            raise WorkerError(f"the worker exited during start-up; see {launch.stderr_log_path(directory)} "
                              f"and {os.path.join(directory, 'logs', 'worker.log')}")
        time.sleep(0.05)
    raise WorkerError(f"no worker answered within {timeout:.0f} s ({current.reason}); "
                      f"see {os.path.join(directory, 'logs', 'worker.log')}")


def is_our_worker(pid: int) -> bool:
    import psutil

    try:
        cmdline = " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False
    return "claude_mem.worker" in cmdline or "claude-mem worker" in cmdline


def stop(data_dir: str | None = None, timeout: float = STOP_TIMEOUT) -> int | None:
    """SIGTERM the worker and wait for it (it reaps its children); SIGKILL its tree after `timeout`.
    Returns the stopped pid, or None when no worker was running."""
    directory = data_dir or settings.data_dir()
    info = discovery.read_info(directory)
    pid = info["pid"] if info and discovery.pid_alive(info["pid"]) else lock_holder(directory)
    if pid is None or gone(pid) or not is_our_worker(pid):
        discovery.remove_info(directory)
        return None
    import psutil

    try:
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        tree = []
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.05)
    if not gone(pid):
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(tree, timeout=5)
        discovery.remove_info(directory, pid=pid)
    return pid


def restart(data_dir: str | None = None) -> tuple[WorkerState, bool]:
    stop(data_dir)
    return start(data_dir)


def version_matches(current: WorkerState) -> bool:
    return current.health is not None and current.health.get("version") == __version__
