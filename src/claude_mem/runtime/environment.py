"""The plugin's own Python environment, `<data dir>/venv`: built in the background, in two stages.

The plugin's hooks and its MCP server (`mcp_server.stdio`) run with the system `python3` and the
standard library alone, so capture and the memory tools work from the first session whatever this
module is doing; only the worker (the observer, search by meaning) needs packages. The first hook
that finds them missing hands the worker lock to a detached build (`autostart`), which:

1. creates the venv;
2. installs the whole package with its extras (the observer SDKs, the embedding model, and `mcp`,
   a dependency kept for the reference MCP server: several hundred MB) and marks the venv *ready*; then the build process becomes
   the worker. Until then search is by keyword.

Each stage is written to `venv-progress.json` (with the durations of the last successful build, for
estimates), so the session-start message, `status` and `doctor` can say what is happening; pip's
output goes to `logs/venv-build.log`. Stdlib only: hooks import this module.
"""

from __future__ import annotations

import os
import sys
import time

from claude_mem import __version__
from claude_mem.capture import diagnostics
from claude_mem.domain import utc_stamp
from claude_mem.fastpath import jsontext
from claude_mem.runtime import discovery

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

VENV_DIRNAME = "venv"
VENV_MARKER = ".claude-mem-version"
PROGRESS_FILE = "venv-progress.json"
BUILD_LOG = os.path.join("logs", "venv-build.log")
BOOTSTRAP_FAILED = "venv-failed"
BOOTSTRAP_RETRY_SECONDS = 600
PIP_TIMEOUT = 1800
WORKER_PACKAGES = ("starlette", "uvicorn", "psutil")
STAGES = ("venv", "worker")
STAGE_LABELS = {
    "venv": "creating the environment",
    "worker": "installing the worker and the search model",
}
# A stage that builds before this one's wrote into venv-progress.json, and the stage that now does its
# work: "tools" installed `mcp` alone, which the worker stage installs with everything else.
RETIRED_STAGES = {"tools": "worker"}
# Seconds per stage on a first install with nothing cached (measured here: the venv ~3 s, the
# packages ~30 s from pip's cache and about a minute and a half from PyPI).
DEFAULT_SECONDS = {"venv": 5, "worker": 100}
# The directory holding the `claude_mem` package (the checkout's `src/` or site-packages).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.dirname(PACKAGE_PARENT)
INFINITY = float("inf")


def has_worker_packages() -> bool:
    """This interpreter can run the worker itself (a regular install), so no venv is needed.

    A walk of `sys.path` for the packages' folders, not `importlib.util.find_spec`: the session-start
    hook asks, and importing importlib.util would cost it about a millisecond."""
    return all(any(os.path.isfile(os.path.join(folder or os.curdir, name, "__init__.py")) for folder in sys.path)
               for name in WORKER_PACKAGES)


def venv_dir(directory: str) -> str:
    return os.path.join(directory, VENV_DIRNAME)


def venv_python(directory: str) -> str:
    return os.path.join(directory, VENV_DIRNAME, "bin", "python")


def venv_stamp() -> str:
    """What the venv was built from: our version and the checkout's pyproject.toml (its dependencies),
    so a venv built before a dependency was added is rebuilt rather than half-working."""
    from claude_mem.capture.digest import sha256_hex

    try:
        with open(os.path.join(CHECKOUT, "pyproject.toml"), "rb") as handle:
            project = sha256_hex(handle.read())[:16]
    except OSError:
        project = "no-pyproject"
    return "%s %s" % (__version__, project)


def _marked(directory: str, marker: str) -> bool:
    try:
        with open(os.path.join(directory, VENV_DIRNAME, marker), encoding="utf-8") as handle:
            return handle.read().strip() == venv_stamp() and os.path.exists(venv_python(directory))
    except OSError:
        return False


def venv_ready(directory: str) -> bool:
    """The whole environment is built for this version: the worker can run from it."""
    return _marked(directory, VENV_MARKER)


# -- progress ------------------------------------------------------------------------------------

def progress_path(directory: str) -> str:
    return os.path.join(directory, PROGRESS_FILE)


def read_progress(directory: str) -> dict[str, Any]:
    """venv-progress.json as a dict ({} when absent or damaged); a stage an earlier version wrote is
    read as the stage that does its work now."""
    try:
        with open(progress_path(directory), "rb") as handle:
            found = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    stage = found.get("stage")
    if isinstance(stage, str) and stage in RETIRED_STAGES:
        found["stage"] = RETIRED_STAGES[stage]
    return found


def _write_progress(directory: str, progress: dict[str, Any]) -> None:
    discovery.write_json(progress_path(directory), progress)


def state(directory: str, now: float | None = None) -> dict[str, Any]:
    """What is true of the venv now, for messages: {state, stage, step, steps, label, started, elapsed,
    remaining, percent, error, log, pid}. `state` is ready, building, failed, interrupted or absent;
    `step` counts the stages from 1, `started` is when the build began (UTC), `percent` is estimated
    from the last build's durations, else typical ones."""
    now = time.time() if now is None else now
    progress = read_progress(directory)
    log = os.path.join(directory, BUILD_LOG)
    stage = progress.get("stage")
    began = progress.get("started")
    found = {"state": "absent", "stage": None, "label": "", "elapsed": None, "remaining": None, "percent": None,
             "step": STAGES.index(stage) + 1 if stage in STAGES else None, "steps": len(STAGES),
             "started": _stamp(began),
             "error": None, "log": log, "pid": progress.get("pid")}
    if venv_ready(directory):
        return {**found, "state": "ready"}
    if progress.get("error"):
        return {**found, "state": "failed", "stage": stage, "error": str(progress["error"]),
                "label": STAGE_LABELS.get(str(stage), "")}
    if stage not in STAGES:
        return found
    if not discovery.pid_alive(progress.get("pid")):
        return {**found, "state": "interrupted", "stage": stage, "label": STAGE_LABELS[stage]}
    started = _number(progress.get("started"), now)
    stage_started = _number(progress.get("stage_started"), now)
    expected = _expected_seconds(progress)
    index = STAGES.index(stage)
    left_in_stage = max(expected[stage] - (now - stage_started), 2)
    remaining = left_in_stage + sum(expected[name] for name in STAGES[index + 1:])
    elapsed = max(now - started, 0.0)
    return {**found, "state": "building", "stage": stage, "label": STAGE_LABELS[stage], "started": _stamp(started),
            "elapsed": round(elapsed, 1), "remaining": round(remaining),
            "percent": min(int(100 * elapsed / (elapsed + remaining)), 99)}


def _stamp(value: object) -> str | None:
    """A time from venv-progress.json in UTC, None when it is not one (the file may be damaged)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return utc_stamp(value)
    except (OverflowError, OSError, ValueError):
        return None


def _number(value: object, default: float) -> float:
    """A finite number from venv-progress.json, else `default` (the file may be damaged: "1e999" is
    JSON for infinity to Python; `math` is not loaded for this, the hooks import this module)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) < INFINITY:
        return default
    return float(value)


def _last_seconds(progress: dict[str, Any]) -> dict[str, float]:
    """The stages the last successful build timed, in seconds; a retired stage's time (a build by an
    earlier version) counts in the stage that does its work now."""
    last = progress.get("last_seconds")
    last = last if isinstance(last, dict) else {}
    timed = {name: _number(last[name], 0.0) for name in STAGES if _number(last.get(name), -1.0) >= 0}
    for retired, now_in in RETIRED_STAGES.items():
        if now_in in timed:
            timed[now_in] += max(_number(last.get(retired), 0.0), 0.0)
    return timed


def _expected_seconds(progress: dict[str, Any]) -> dict[str, float]:
    """Seconds per stage: the last build's, else typical ones."""
    return {**{name: float(DEFAULT_SECONDS[name]) for name in STAGES}, **_last_seconds(progress)}


WHILE_BUILDING = ("memory tools and capture work now; until the worker (observer, search by meaning) runs, "
                  "search is by keyword")


def describe(found: dict[str, Any]) -> str:
    """One line for people: what the environment is doing, or the problem and where to look."""
    if found["state"] == "ready":
        return "built"
    if found["state"] == "building":
        return "building: step %d of %d, %s, about %d%% (since %s, %.0f s so far, about %d s left; log: %s); %s" % (
            found["step"], found["steps"], found["label"], found["percent"] or 0, found["started"],
            found["elapsed"] or 0, found["remaining"] or 0, found["log"], WHILE_BUILDING)
    if found["state"] == "failed":
        return "build failed while %s: %s (log: %s)" % (found["label"] or "building", found["error"], found["log"])
    if found["state"] == "interrupted":
        return "build interrupted while %s; the next session start builds it again" % found["label"]
    return "not built"


def session_notice(directory: str) -> str | None:
    """What the session-start message adds while the plugin's environment is not ready (None when it
    is, or when this interpreter needs none)."""
    if venv_ready(directory) or has_worker_packages():
        return None
    from claude_mem.runtime import interpreter

    if interpreter.usable(directory) is not None:  # the worker runs with what `claude-mem install` recorded
        return None
    found = state(directory)
    # The hook has just handed the lock to a build that has not written its progress yet.
    if found["state"] in ("absent", "interrupted") and discovery.lock_held(directory):
        found = {**found, "state": "building", "remaining": sum(_expected_seconds(read_progress(directory)).values())}
    if found["state"] == "building":
        return ("first run: memory tools and capture work now (this session is being recorded); setting up the "
                "worker (observer, search by meaning) in the background, about %d s left; until then search is by "
                "keyword" % (found["remaining"] or 0))
    if found["state"] == "failed":
        return "could not set up its environment (%s); capture still works - see %s" % (
            found["error"][:160], found["log"])
    return None


# -- the build -----------------------------------------------------------------------------------

def recently_failed(directory: str) -> bool:
    try:
        return time.time() - os.path.getmtime(os.path.join(directory, BOOTSTRAP_FAILED)) < BOOTSTRAP_RETRY_SECONDS
    except OSError:
        return False


def build(directory: str) -> bool:
    """Build `<data dir>/venv` in stages, recording progress; True when all of it is ready.

    Runs in the detached bootstrap process, holding the worker lock, so no other hook starts a second
    build. Whatever is in the venv's place (an unfinished build, another version's) is removed first.
    """
    import shutil
    import subprocess

    from claude_mem.runtime import interpreter

    if not os.path.exists(os.path.join(CHECKOUT, "pyproject.toml")):
        return _failed(directory, {}, "venv", "%s is not a plugin checkout" % CHECKOUT)
    target = venv_dir(directory)
    python = venv_python(directory)
    seconds: dict[str, float] = {}
    started = time.time()
    progress: dict[str, Any] = {"pid": os.getpid(), "started": started, "version": venv_stamp(), "source": CHECKOUT,
                      "seconds": seconds, "last_seconds": _last_seconds(read_progress(directory))}
    os.makedirs(os.path.join(directory, "logs"), mode=0o700, exist_ok=True)
    diagnostics.log(directory, "autostart", "building %s from %s (a minute or two)" % (target, CHECKOUT))
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"]
    steps = [
        ("venv", [sys.executable, "-m", "venv", target], 300),
        ("worker", pip + [CHECKOUT + "[%s]" % ",".join(interpreter.DEFAULT_EXTRAS)], PIP_TIMEOUT),
    ]
    shutil.rmtree(target, ignore_errors=True)
    with open(os.path.join(directory, BUILD_LOG), "ab") as log:
        log.write(("\n== %s building %s\n" % (utc_stamp(), target)).encode())
        for stage, argv, timeout in steps:
            stage_started = time.time()
            progress.update(stage=stage, stage_started=stage_started)
            _write_progress(directory, progress)
            log.write(("== %s %s: %s\n" % (utc_stamp(), stage, " ".join(argv))).encode())
            log.flush()
            try:
                subprocess.run(argv, check=True, timeout=timeout, stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, cwd=directory)
            except (OSError, subprocess.SubprocessError) as exc:
                log.flush()
                return _failed(directory, progress, stage, "%s: %s" % (type(exc).__name__, _tail(directory) or exc))
            seconds[stage] = round(time.time() - stage_started, 1)
    _mark(directory, VENV_MARKER)
    total = time.time() - started
    progress.update(stage="ready", finished=time.time(), last_seconds={**progress["last_seconds"], **seconds})
    _write_progress(directory, progress)
    try:
        os.remove(os.path.join(directory, BOOTSTRAP_FAILED))
    except OSError:
        pass
    diagnostics.log(directory, "autostart", "venv ready in %.0f s; starting the worker" % total)
    return True


def _mark(directory: str, marker: str) -> None:
    with open(os.path.join(venv_dir(directory), marker), "w", encoding="utf-8") as handle:
        handle.write(venv_stamp() + "\n")


def _tail(directory: str, limit: int = 600) -> str:
    """The last meaningful lines of the build log (pip's error), for one-line messages."""
    try:
        with open(os.path.join(directory, BUILD_LOG), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(handle.tell() - 4000, 0))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    useful = [line.strip() for line in lines if line.strip() and not line.startswith("==")
              and not line.lstrip().startswith("WARNING: Location")]
    return " ".join(useful[-3:])[-limit:]


def _failed(directory: str, progress: dict[str, Any], stage: str, error: str) -> bool:
    progress.update(stage=stage, error=error, failed=time.time())
    try:
        _write_progress(directory, progress)
        with open(os.path.join(directory, BOOTSTRAP_FAILED), "w", encoding="utf-8") as handle:
            handle.write(utc_stamp() + "\n")
    except OSError:
        pass
    diagnostics.log(directory, "autostart", "venv build failed while %s: %s" % (STAGE_LABELS.get(stage, stage), error))
    return False


def clear_failure(directory: str) -> None:
    """Forget a failed build, so the next hook (or `repair`) starts a fresh one at once."""
    try:
        os.remove(os.path.join(directory, BOOTSTRAP_FAILED))
    except OSError:
        pass
    progress = read_progress(directory)
    if progress.pop("error", None) is not None:
        progress["stage"] = None
        _write_progress(directory, progress)
