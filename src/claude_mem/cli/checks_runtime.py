"""`claude-mem doctor`'s checks of what runs: settings, the worker, the observer, the plugin's
environment and the search model."""

from __future__ import annotations

import os
import socket
import subprocess
from typing import Any
from urllib.parse import urlsplit

from claude_mem import __version__, settings
from claude_mem.cli.checks import INFO, OK, PROBLEM, WARNING, Check, Context
from claude_mem.cli.plugin_env import recorded_line
from claude_mem.index import embedder
from claude_mem.observer.providers.auto import describe
from claude_mem.runtime import environment

REACH_TIMEOUT = 2.0
ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
VENV_STATES = {"ready": "built", "stale": "unfinished, or built for another version", "failed": "its build failed",
               "interrupted": "its build was interrupted", "building": "being built"}
SEARCH_PROBE = "from claude_mem.index.embedder import Embedder; Embedder().embed(['doctor'])"


def settings_checks(ctx: Context) -> list[Check]:
    refused = settings.problems(ctx.data_dir)
    if not refused:
        return [Check("settings", OK, f"{settings.settings_path(ctx.data_dir)}: every value usable")]
    return [Check("settings", WARNING, problem, "fix or remove that file" if "JSON object" in problem else
                  "`claude-mem settings set KEY VALUE`, or fix the CLAUDE_MEM_<KEY> environment variable")
            for problem in refused]


def worker_checks(ctx: Context) -> list[Check]:
    found = [Check("worker", INFO, note) for note in ctx.stopped]
    worker = ctx.worker
    restart = "`claude-mem repair` (restarts it)"
    if worker.running:
        health: dict[str, Any] = dict(worker.health or {})
        version = health.get("version")
        where = f"pid {worker.pid}, {worker.url}, version {version}, up {_uptime(float(health.get('uptime') or 0))}"
        if version != __version__:
            return found + [Check("worker", PROBLEM, f"{where}: another version than this claude-mem ({__version__})",
                                  restart)]
        problems: dict[str, Any] = dict(health.get("problems") or {})
        if problems:
            listed = "; ".join(f"{name}: {why}" for name, why in problems.items())
            return found + [Check("worker", WARNING, f"{where}, degraded: {listed}",
                                  f"see {os.path.join(ctx.data_dir, 'logs', 'worker.log')}; `claude-mem repair`")]
        return found + [Check("worker", OK, f"running, {where}")]
    reason = worker.reason
    if reason.startswith("pid") and "does not answer" in reason:
        return found + [Check("worker", PROBLEM, reason, restart)]
    if "served by the worker of" in reason:
        return found + [Check("worker", PROBLEM, reason, "give one of the two data dirs another port: "
                              "`claude-mem settings set worker_port 0` (any free port)")]
    if reason.startswith("starting or stopping"):
        building = ctx.environment["state"] == "building"
        return found + [Check("worker", INFO, "its environment is being built; it starts right after" if building
                              else reason)]
    start = "the next session start starts it" if ctx.values.get("autostart", True) else \
        "autostart is off: `claude-mem worker start`"
    if ctx.nothing_registered:
        start = "no session starts it while claude-mem is not registered (see hooks)"
    return found + [Check("worker", INFO, f"{reason}; {start}")]


def _uptime(seconds: float) -> str:
    minutes, hours = int(seconds) // 60, int(seconds) // 3600
    return f"{hours} h {minutes % 60} min" if hours else f"{minutes} min {int(seconds) % 60} s"


def reachable(url: str, timeout: float = REACH_TIMEOUT) -> str:
    """"" when a TCP connection to the URL's host and port opens within `timeout`, else why not.
    Nothing is sent: no request reaches an LLM."""
    parts = urlsplit(url)
    if not parts.hostname:
        return f"{url!r} names no host"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return ""
    except (OSError, ValueError) as exc:
        return str(exc) or type(exc).__name__


def _base_url(name: str, values: dict[str, Any]) -> str:
    if name == "anthropic":
        return str(values.get("anthropic_base_url") or ANTHROPIC_DEFAULT_URL)
    if name == "openai":
        return str(values.get("openai_base_url") or "")
    return ""


def observer_checks(ctx: Context) -> list[Check]:
    provider = (ctx.worker.health or {}).get("provider") if ctx.worker.running else None
    if isinstance(provider, dict) and provider.get("name"):
        name, ok = str(provider["name"]), bool(provider.get("ok"))
        reason = f"as the running worker reports it: {provider.get('reason') or ''}".rstrip(": ")
    else:
        chosen = describe(ctx.values)
        name, ok = str(chosen["name"]), bool(chosen["ok"])
        reason = str(chosen["reason"])
        if chosen["detail"] and name in ("claude", "anthropic", "openai"):
            reason += f"; {chosen['detail']}"
    wanted = str(ctx.values.get("provider") or "auto").lower()
    if not ok:
        return [Check("observer", PROBLEM, f"{name} cannot work ({reason})", _observer_fix(name))]
    url = _base_url(name, ctx.values)
    unreachable = reachable(url) if url else ""
    if unreachable:
        return [Check("observer", PROBLEM, f"{name}: cannot reach {settings.display(f'{name}_base_url', url)} "
                      f"({unreachable})", f"check the network or `{name}_base_url`, or choose another `provider`")]
    if name == "offline" and wanted == "auto":
        return [Check("observer", INFO, f"offline, no LLM: {reason.removeprefix('auto: ')}",
                      "for observations an LLM writes: log in to Claude Code (`claude`, then /login) or set "
                      "ANTHROPIC_API_KEY")]
    return [Check("observer", OK, f"{name} ({reason})" + (f", {url} reachable" if url else ""))]


def _observer_fix(name: str) -> str:
    if name == "claude":
        return "log in to Claude Code (`claude`, then /login), or set `cli_path`, or choose another `provider`"
    if name == "anthropic":
        return "`claude-mem settings set anthropic_api_key …` or export ANTHROPIC_API_KEY"
    return "see `claude-mem settings` for the provider's settings"


def environment_checks(ctx: Context) -> list[Check]:
    found = ctx.environment
    recorded = _recorded_checks(ctx)
    state, line = found["state"], found["line"]
    needed = ctx.plugin_runs_hooks
    rebuild = "`claude-mem repair` (rebuilds it)"
    if ctx.nothing_registered and state != "absent":  # what stays on disk says how to remove it
        what = VENV_STATES.get(state, state)
        return recorded + [Check("plugin environment", INFO, f"{found['venv']} ({what}); nothing registered uses it")]
    if recorded and recorded[0].status == OK:  # the worker runs with that interpreter: no venv is needed
        unused = [Check("plugin environment", INFO, f"{found['venv']} is not used (the worker runs with the "
                        "recorded interpreter)", f"`rm -rf {found['venv']}` frees its space")] if state != "absent" else []
        return recorded + unused
    return recorded + _venv_checks(ctx, state, line, needed, rebuild)


def _recorded_checks(ctx: Context) -> list[Check]:
    """The interpreter `claude-mem install` recorded for the worker, if any."""
    if not ctx.environment["recorded"]:
        return []
    line = recorded_line(ctx.environment)
    if ctx.environment["recorded_problem"]:
        status = WARNING if ctx.registration.ours_by_settings else INFO
        return [Check("worker environment", status, line, "`claude-mem install` again, from the environment claude-mem "
                      "is installed in")]
    return [Check("worker environment", OK, line)]


def _venv_checks(ctx: Context, state: str, line: str, needed: bool, rebuild: str) -> list[Check]:
    found = ctx.environment
    if state == "ready":
        return [Check("plugin environment", OK if needed else INFO, f"{found['venv']}: built")]
    if state == "building":
        return [Check("plugin environment", INFO, line)]
    if state == "failed":
        return [Check("plugin environment", PROBLEM if needed else WARNING, line, rebuild)]
    if state in ("interrupted", "stale"):
        return [Check("plugin environment", INFO, line, rebuild)]
    if needed:  # the plugin's hooks run with `python3 -I -S`: its worker always runs from the venv
        return [Check("plugin environment", INFO, "not built yet: the next session start builds it in the "
                      "background (about two minutes)")]
    if environment.has_worker_packages():
        return [Check("plugin environment", INFO, "not built; not needed by this install (it has the worker's "
                      "packages)")]
    return [Check("plugin environment", INFO, "not built (only the plugin needs it)")]


def search_checks(ctx: Context) -> list[Check]:
    keyword_fix = "install the search extra: pip install 'claude-mem-py[search]' (the plugin's environment has it)"
    vectors = (ctx.worker.health or {}).get("vectors") if ctx.worker.running else None
    if isinstance(vectors, dict):
        if vectors.get("available"):
            return [Check("search", OK, f"{vectors.get('model')} in the worker: {vectors.get('embedded')} of "
                          f"{vectors.get('total')} rows embedded")]
        return [Check("search", INFO, f"keyword-only in the worker: {vectors.get('reason')}", keyword_fix)]
    recorded = ctx.environment["recorded"]
    if ctx.plugin_runs_hooks and recorded and not ctx.environment["recorded_problem"]:
        return [_probe_venv_model(str(recorded["python"]), keyword_fix)]  # the plugin's worker runs with it
    if ctx.plugin_runs_hooks:  # the plugin's worker runs from its environment
        if ctx.environment["state"] != "ready":
            return [Check("search", INFO, "not known yet: the plugin's worker runs from its environment, which is "
                          "not built")]
        return [_probe_venv_model(environment.venv_python(ctx.data_dir), keyword_fix)]
    missing = embedder.unavailable()
    if missing:
        return [Check("search", INFO, f"keyword-only: {missing}", keyword_fix)]
    try:
        embedder.Embedder().embed(["doctor"])
    except embedder.ModelUnavailable as exc:
        return [Check("search", INFO, f"keyword-only: {exc}", keyword_fix)]
    return [Check("search", OK, f"{embedder.MODEL} loads (search by words and meaning)")]


def _probe_venv_model(python: str, keyword_fix: str) -> Check:
    try:
        done = subprocess.run([python, "-c", SEARCH_PROBE], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("search", INFO, f"keyword-only: the worker's environment ({python}) cannot load the model ({exc})",
                     keyword_fix)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Check("search", INFO, f"keyword-only: the worker's environment ({python}) cannot load the model ({last})",
                     "`claude-mem repair` (rebuilds the environment)")
    return Check("search", OK, f"{embedder.MODEL} loads in the worker's environment ({python}; search by words and meaning)")
