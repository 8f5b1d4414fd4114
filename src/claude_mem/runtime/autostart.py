"""Start the worker from a hook when it is not running (DESIGN §7). Stdlib only, fast, never blocks.

`ensure_worker()` costs a file read and one loopback `/health` call when the worker runs. Otherwise it
takes the worker lock and hands it to a detached child, so concurrent hooks start one worker at most.
The worker runs with the interpreter `claude-mem install` recorded (`runtime.interpreter`, checked
for every dependency), else the one running the hook when it has the worker's packages, else
`<data dir>/venv`. When none has
them (the plugin's hooks run with a system python straight from the checkout), that child first
builds the venv (`runtime.environment`, in stages) and then becomes the worker; until it is ready,
other hooks see the lock held and leave it alone. The worker is told what it was started for
(`runtime.origin`), so it stops itself once that is uninstalled.
"""

from __future__ import annotations

import os
import sys

from claude_mem import __version__
from claude_mem import settings as settings_module
from claude_mem.capture import diagnostics
from claude_mem.runtime import discovery, environment
from claude_mem.runtime.environment import PACKAGE_PARENT

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

HEALTH_TIMEOUT = 0.5
RESTARTED_MARKER = "worker.restarted-for"


def ensure_worker(data_dir: str | None = None, values: dict[str, Any] | None = None) -> str:
    """Make sure a worker of this data dir and version runs or is on its way; never waits for it.

    Returns what it found or did: off, running, starting, spawned, bootstrapping, restarting,
    mismatch (another version still answers after one restart), or error.
    """
    directory = data_dir or settings_module.data_dir()
    try:
        values = values if values is not None else settings_module.load(directory)
        if not values.get("autostart", True):
            return "off"
        outcome = _ensure(directory, values)
    except Exception as exc:  # a hook must never fail because the worker could not start
        diagnostics.log(directory, "autostart", "error: %s: %s" % (type(exc).__name__, exc))
        return "error"
    if outcome not in ("running", "starting"):
        diagnostics.log(directory, "autostart", outcome)
    return outcome


def _ensure(directory: str, values: dict[str, Any]) -> str:
    info = discovery.read_info(directory)
    if info is not None and discovery.pid_alive(info["pid"]):
        health = discovery.probe_health(info["port"], timeout=HEALTH_TIMEOUT)
        if health is not None and health.get("data_dir") == directory:
            if health.get("version") == __version__:
                return "running"
            return _restart_once(directory, values, info, str(health.get("version")))
    return _spawn(directory, values)


def _restart_once(directory: str, values: dict[str, Any], info: dict[str, Any], running_version: str) -> str:
    """Replace a worker of another version, once per version of ours (no restart loop if the
    replacement still reports another version, e.g. an old venv)."""
    marker = os.path.join(directory, RESTARTED_MARKER)
    try:
        with open(marker, encoding="utf-8") as handle:
            if handle.read().strip() == __version__:
                return "mismatch"
    except OSError:
        pass
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write(__version__ + "\n")
    import signal

    from claude_mem.runtime import launch

    try:
        os.kill(info["pid"], signal.SIGTERM)
    except OSError:
        pass
    # The replacement waits for the old worker to release the lock, then takes it.
    argv = _worker_command(directory, values)
    if argv is None:  # a venv of our version must be built first: the next hook starts that build
        return "restarting (venv to rebuild)"
    command, pythonpath = argv
    launch.spawn(command + ["--lock-wait", "60"], directory, _worker_env(values, pythonpath))
    return "restarting (worker %s, hooks %s)" % (running_version, __version__)


def _spawn(directory: str, values: dict[str, Any]) -> str:
    fd = discovery.try_lock(directory)
    if fd is None:
        return "starting"  # a worker (or its venv build) holds the lock
    from claude_mem.runtime import launch  # subprocess costs milliseconds: only when spawning
    try:
        chosen = _worker_command(directory, values, fd)
        if chosen is None:
            return _bootstrap(directory, values, fd)
        command, pythonpath = chosen
        pid = launch.spawn(command, directory, _worker_env(values, pythonpath), pass_fd=fd)
        return "spawned pid %d" % pid
    finally:
        os.close(fd)


def _worker_command(directory: str, values: dict[str, Any],
                    fd: int | None = None) -> tuple[list[str], str | None] | None:
    """(argv, PYTHONPATH) of a worker this machine can run now, or None when a venv must be built.

    This interpreter and a recorded one run our code: a checkout's `src` goes on PYTHONPATH (never a
    site-packages folder, which would come before the standard library)."""
    from claude_mem.runtime import interpreter, launch

    checkout = os.path.exists(os.path.join(os.path.dirname(PACKAGE_PARENT), "pyproject.toml"))
    recorded = interpreter.usable(directory)  # checked for every dependency: before one that has the worker's three
    if recorded is not None:
        return launch.worker_argv(str(recorded["python"]), fd), PACKAGE_PARENT if checkout else None
    if environment.has_worker_packages():
        return launch.worker_argv(sys.executable, fd), PACKAGE_PARENT if checkout else None
    if environment.venv_ready(directory):
        return launch.worker_argv(environment.venv_python(directory), fd), None
    return None


def _worker_env(values: dict[str, Any], pythonpath: str | None = None) -> dict[str, str]:
    """The hook's environment without the session's variables, and with what the worker is for."""
    from claude_mem.runtime import launch, origin

    env = launch.scrubbed_env(dict(os.environ), str(values.get("anthropic_base_url") or ""), pythonpath)
    env[origin.ENV] = origin.describe(os.environ, os.getcwd())
    return env


def _bootstrap(directory: str, values: dict[str, Any], fd: int) -> str:
    if environment.recently_failed(directory):
        return "venv build failed recently; see %s" % environment.BUILD_LOG
    from claude_mem.runtime import launch

    code = "import sys; sys.path.insert(0, sys.argv[1]); from claude_mem.runtime.autostart import bootstrap; " \
           "sys.exit(bootstrap(sys.argv[2], int(sys.argv[3])))"
    pid = launch.spawn([sys.executable, "-c", code, PACKAGE_PARENT, directory, str(fd)], directory,
                       _worker_env(values), pass_fd=fd)
    return "bootstrapping pid %d" % pid


def bootstrap(directory: str, lock_fd: int) -> int:
    """Detached: build `<data dir>/venv` (`environment.build`), then become the worker.

    Runs holding the worker lock (inherited), so no other hook starts a second build or worker.
    """
    if not environment.build(directory):
        return 1
    from claude_mem.runtime import launch

    os.set_inheritable(lock_fd, True)
    argv = launch.worker_argv(environment.venv_python(directory), lock_fd)
    os.execv(argv[0], argv)
    return 1  # not reached
