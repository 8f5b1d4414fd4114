"""Restarting the worker in place, so that settings read only at start take effect.

The worker shuts down gracefully (services stopped, children reaped, `worker.json` removed) and
then replaces itself with a fresh `python -m claude_mem.worker` through `exec`, handing over the
worker lock it holds: the lock is never free in between, so no hook or CLI can start a second
worker meanwhile, and the new one serves the same data dir on the same port (the viewer that
asked reconnects to it), unless `worker_port` itself was changed.
"""

from __future__ import annotations

import logging
import os
import sys

from claude_mem import settings
from claude_mem.runtime import launch
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")


def next_port(ctx: WorkerContext) -> int:
    """This worker's port, or the one a changed `worker_port` names (unset: the default port)."""
    wanted = settings.load(ctx.data_dir)["worker_port"]
    if wanted == ctx.settings.get("worker_port") or wanted == 0:
        return ctx.port
    return settings.default_port() if wanted is None else int(wanted)


def request(ctx: WorkerContext) -> int:
    """Mark the worker for a restart; returns the port it will serve on. The caller then calls
    `ctx.shutdown()` (after its response is sent), and the daemon calls `replace_process`."""
    if ctx.shutdown is None:
        raise RuntimeError("this worker does not run as a daemon and cannot restart itself")
    ctx.restart_port = next_port(ctx)
    return ctx.restart_port


def replace_process(lock_fd: int, port: int) -> None:
    """Become a new worker process (never returns unless `exec` fails, which is logged)."""
    argv = [*launch.worker_argv(sys.executable, lock_fd), "--port", str(port)]
    log.info("restarting: %s", " ".join(argv))
    for handler in logging.getLogger().handlers:
        handler.flush()
    try:
        os.set_inheritable(lock_fd, True)
        os.execv(sys.executable, argv)
    except OSError:
        log.exception("restart failed; the worker stops instead")
