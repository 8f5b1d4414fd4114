"""Install reuses what is there; uninstall leaves nothing running (issue 27, item 5).

A real `claude-mem install` into a temp HOME and data dir, then the SessionStart hook it registered,
run as Claude Code runs it with autostart on: whether a venv was built (budget: none; before the
recorded interpreter the hook spent minutes building one), the hook's wall time and how long until
the worker answers. Then the cost of the worker's look at its registration (`registered.Watch.gone`,
every 2 s), in microseconds of CPU per look and CPU seconds per day, and how long the worker takes to
stop itself once its hooks are removed from the settings file.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from claude_mem.runtime import control, environment, registered

WATCH_SECONDS = 2.0
STOP_BUDGET_S = 10.0  # the worker looks every 2 s; a clean shutdown takes a few more


def _wait(condition, timeout: float) -> float | None:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if condition():
            return round(time.monotonic() - began, 2)
        time.sleep(0.05)
    return None


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def watch_cost(settings_file: str, looks: int) -> float:
    """Median CPU microseconds of one look, over rounds of `looks` looks (nothing changed: the common case)."""
    origin = {"kind": "settings", "files": [settings_file, settings_file + ".project", settings_file + ".local"]}
    watch = registered.Watch(origin, environment.PACKAGE_PARENT)
    rounds = []
    for _ in range(7):
        began = _cpu()
        for _ in range(looks):
            assert watch.gone() is None
        rounds.append((_cpu() - began) / looks * 1e6)
    return round(statistics.median(rounds), 2)


def main(argv: list[str]) -> dict:
    looks = 2000 if "--quick" in argv else 20000
    with tempfile.TemporaryDirectory(prefix="bench-install-") as root:
        home, data_dir, project = (os.path.join(root, name) for name in ("home", "data", "project"))
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(home)
        env = {**os.environ, "HOME": home, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_PROVIDER": "offline",
               "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
        env.pop("CLAUDE_CONFIG_DIR", None)
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "claude_mem", "install", "--json"], env=env, cwd=project,
                              capture_output=True, text=True, timeout=300)
        install_s = round(time.monotonic() - began, 2)
        recorded = json.loads(done.stdout)["environment"]
        settings_file = os.path.join(home, ".claude", "settings.json")
        with open(settings_file, encoding="utf-8") as handle:
            settings = json.load(handle)
        command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        payload = {"session_id": "bench-install", "hook_event_name": "SessionStart", "source": "startup",
                   "cwd": project, "transcript_path": os.path.join(root, "t.jsonl")}
        began = time.monotonic()
        subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                       env={**env, "CLAUDE_MEM_AUTOSTART": "true", "CLAUDE_PROJECT_DIR": project}, cwd=project,
                       timeout=60)
        hook_ms = round((time.monotonic() - began) * 1000, 1)
        ready_s = _wait(lambda: control.state(data_dir, timeout=1.0).running, 60)
        venv_built = os.path.exists(environment.venv_dir(data_dir)) or os.path.exists(environment.progress_path(data_dir))
        pid = control.state(data_dir).pid
        settings.pop("hooks")
        with open(settings_file, "w", encoding="utf-8") as handle:
            json.dump(settings, handle)
        stop_s = _wait(lambda: pid is None or not control.state(data_dir, timeout=1.0).running, 60)
        control.stop(data_dir, timeout=20)
        look_us = watch_cost(settings_file, looks)
    return {
        "install_s": install_s, "dependency_check_s": recorded["check_seconds"], "recorded_complete": recorded["complete"],
        "first_hook_ms": hook_ms, "worker_ready_s": ready_s, "venv_built": venv_built,
        "stops_itself_s": stop_s, "stop_budget_s": STOP_BUDGET_S,
        "watch_look_cpu_us": look_us, "watch_cpu_s_per_day": round(look_us * 86400 / WATCH_SECONDS / 1e6, 3),
    }
