"""The worker process: `python -m claude_mem.worker`.

Holds the exclusive worker lock for its whole life, heals a corrupt database before anything opens
it, serves the app on 127.0.0.1, publishes `worker.json` once it answers, and on SIGTERM stops its
services, reaps every child it left and removes `worker.json`. Asked to restart (`restart.py`), it
does the same and then replaces itself with a new worker that inherits the lock.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import fcntl
import logging
import logging.handlers
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from types import FrameType

import psutil
import uvicorn

from claude_mem import paths
from claude_mem import settings as settings_module
from claude_mem.domain import utc_stamp
from claude_mem.runtime import discovery, environment, origin, registered
from claude_mem.store import NewerSchema, integrity
from claude_mem.store.restore_first import restore_first
from claude_mem.worker import restart
from claude_mem.worker.app import create_app
from claude_mem.worker.context import WorkerContext

log = logging.getLogger("claude_mem.worker")

EXIT_LOCKED = 3  # another worker holds the lock: not an error, there is just nothing to do
EXIT_NEWER_SCHEMA = 4  # the database was written by a newer claude-mem: this build must not run on it
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
REAP_GRACE = 3.0
WATCH_SECONDS = 2.0  # how often it looks whether what it was started for is still installed (a few stats)


class Server(uvicorn.Server):
    """uvicorn's server without its re-raise of the captured signal after shutdown: we clean up first.
    It remembers being signalled: a stop signal overrides a restart asked for over HTTP."""

    signalled = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.signalled = True
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)


def setup_logging(data_dir: str, level: str) -> None:
    directory = os.path.join(data_dir, "logs")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        os.path.join(directory, "worker.log"), maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))


def acquire_lock(data_dir: str, inherited_fd: int | None, wait: float) -> int | None:
    """The fd holding the worker lock: the one our spawner passed, or one we take (waiting `wait` s)."""
    if inherited_fd is not None:
        fcntl.flock(inherited_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # already ours: a no-op check
        os.set_inheritable(inherited_fd, False)
        return inherited_fd
    deadline = time.monotonic() + wait
    while True:
        fd = discovery.try_lock(data_dir)
        if fd is not None or time.monotonic() >= deadline:
            return fd
        time.sleep(0.1)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port; a taken port falls back to any free one (worker.json tells)."""
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only for sockets that name TCP, and
    # with Nagle on, a kept-alive client waited ~40 ms for a delayed ACK between headers and body.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE or port == 0:
            sock.close()
            raise
        log.warning("port %d is taken; listening on a free port instead (see worker.json)", port)
        sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def reap_children(grace: float = REAP_GRACE) -> list[int]:
    """Terminate, then kill, every descendant still alive — and, when we lead our own session (we were
    started detached), every process left in it, which catches orphaned grandchildren too."""
    me = psutil.Process()
    found = {child.pid: child for child in me.children(recursive=True)}
    if os.getsid(0) == os.getpid():
        for proc in psutil.process_iter():
            try:
                if proc.pid != me.pid and os.getsid(proc.pid) == me.pid:
                    found.setdefault(proc.pid, proc)
            except (OSError, psutil.Error):
                continue
    procs = list(found.values())
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=grace)
    if procs:
        log.info("reaped %d child process(es): %s", len(procs), sorted(found))
    return sorted(found)


_stop_requested = False


def _early_stop(signum: int, frame: object) -> None:
    """SIGTERM before the server runs: remember it, and let the normal shutdown path run."""
    global _stop_requested
    _stop_requested = True


def worker_info(ctx: WorkerContext, watch: registered.Watch) -> dict[str, object]:
    """worker.json (DESIGN §7), with the observer the services actually started (the session-start
    context header names it; empty when no observer service runs), the folder this worker imported
    `claude_mem` from (`package`: a worker whose code was uninstalled is stopped, `runtime.stale`), the
    interpreter it runs with (`python`) and what registered it (`started_for`, "" for nothing)."""
    return {
        "pid": ctx.pid, "port": ctx.port, "version": ctx.version, "data_dir": ctx.data_dir,
        "started": ctx.started,
        "provider": {"name": ctx.provider_name},
        "package": environment.PACKAGE_PARENT,
        "python": sys.executable,
        "started_for": watch.registered,
    }


async def serve(server: Server, sock: socket.socket, ctx: WorkerContext) -> None:
    if _stop_requested:
        server.should_exit = True

    def shutdown() -> None:
        log.info("shutting down on request%s", " to restart" if ctx.restart_port is not None else "")
        server.should_exit = True

    ctx.shutdown = shutdown
    watch = registered.Watch(origin.parse(os.environ.get(origin.ENV)), environment.PACKAGE_PARENT)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:  # the lifespan has run: every service has started (or reported why not)
        discovery.write_info(ctx.data_dir, worker_info(ctx, watch))
        log.info("worker %s ready on http://127.0.0.1:%d (pid %d, data dir %s)",
                 ctx.version, ctx.port, ctx.pid, ctx.data_dir)
    watchers = [asyncio.create_task(close_bus_on_exit(server, ctx)),
                asyncio.create_task(stop_when_uninstalled(server, ctx, watch))]
    try:
        await task
    finally:
        for watcher in watchers:
            watcher.cancel()


async def stop_when_uninstalled(server: Server, ctx: WorkerContext, watch: registered.Watch) -> None:
    """Stop once what started this worker is uninstalled (`runtime.origin`): the plugin, or the hooks of
    `claude-mem install`; then nothing would ever use it again, and it would hold its memory for nothing."""
    log.info("started for %s", watch.registered or "nothing registered (watching only its own code)")
    while not server.should_exit:
        await asyncio.sleep(WATCH_SECONDS)
        why = watch.gone()
        if why:
            log.warning("stopping: %s", why)
            origin.note_stopped(ctx.data_dir, why, ctx.pid)
            ctx.restart_port = None
            server.should_exit = True
            return


async def close_bus_on_exit(server: Server, ctx: WorkerContext) -> None:
    """Once shutdown begins, end the bus's subscriptions: uvicorn waits for open responses (SSE
    streams never finish on their own) before it runs the lifespan shutdown."""
    while not server.should_exit:
        await asyncio.sleep(0.05)
    ctx.bus.close()


def check_store(ctx: WorkerContext) -> None:
    """Open (create, migrate) the database and rebuild a damaged full-text index, noting what was done."""
    conn = ctx.connect()
    try:
        repair = integrity.repair_indexes(conn)
    finally:
        conn.close()
    if repair.rebuilt:
        ctx.store_notes.append(f"{utc_stamp()}: rebuilt the damaged search index(es) {', '.join(repair.rebuilt)}")
    if repair.error:
        ctx.service_errors["store"] = f"search index(es) {', '.join(repair.broken)} broken: {repair.error}"


def run(lock_fd: int | None, lock_wait: float, port_override: int | None = None) -> int:
    paths.private_files()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _early_stop)
    data_dir = settings_module.data_dir()
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    values = settings_module.load(data_dir)
    fd = acquire_lock(data_dir, lock_fd, lock_wait)
    if fd is None:
        print(f"claude-mem worker: another worker holds {discovery.lock_path(data_dir)}", file=sys.stderr)
        return EXIT_LOCKED
    setup_logging(data_dir, str(values["log_level"]))
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    origin.clear_stopped(data_dir)
    ctx = WorkerContext(settings=values, data_dir=data_dir)
    server: Server | None = None
    try:
        recovered = restore_first(data_dir)  # under the lock the hooks and the CLI take: one restore
        if recovered is not None:
            ctx.store_notes.append(f"{recovered['at']}: {recovered['problem']}; {recovered['note']}")
        ctx.recovery = recovered or discovery.read_recovery(data_dir)
        try:
            check_store(ctx)  # create or migrate the schema, and repair its search indexes, before any service
        except NewerSchema as exc:  # never write to it: the hooks keep their events in the spool meanwhile
            log.error("not starting: %s", exc)
            origin.note_stopped(data_dir, str(exc), os.getpid())
            return EXIT_NEWER_SCHEMA
        except Exception as exc:
            log.exception("cannot open the database")
            ctx.service_errors["database"] = f"{type(exc).__name__}: {exc}"
        port = values["worker_port"] if port_override is None else port_override
        sock = bind(settings_module.default_port() if port is None else int(port))
        ctx.port = sock.getsockname()[1]
        config = uvicorn.Config(
            create_app(ctx), log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=5,
        )
        server = Server(config)
        asyncio.run(serve(server, sock, ctx))
        return 0
    except Exception:
        log.exception("worker failed")
        return 1
    finally:
        discovery.remove_info(data_dir, pid=os.getpid())
        reap_children()
        log.info("worker %d stopped", os.getpid())
        if ctx.restart_port is not None and not _stop_requested and not (server and server.signalled):
            restart.replace_process(fd, ctx.restart_port)
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claude_mem.worker", description=__doc__)
    parser.add_argument("--lock-fd", type=int, default=None, help="an fd already holding worker.lock")
    parser.add_argument("--lock-wait", type=float, default=0.0, help="seconds to wait for the lock")
    parser.add_argument("--port", type=int, default=None, help="the port to bind instead of worker_port's")
    args = parser.parse_args(argv)
    return run(args.lock_fd, args.lock_wait, args.port)
