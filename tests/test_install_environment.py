"""`claude-mem install` records the interpreter it runs in when that imports every dependency, and the
worker runs there: the first hook afterwards builds no `<data dir>/venv` (issue 27: it spent 215 s
building one). A real install into a temp HOME and data dir, the registered hook run as Claude Code
runs it, a real worker."""

import json
import os
import subprocess
import sys

import psutil
import pytest

from claude_mem import __version__
from claude_mem.runtime import control, environment, interpreter
from hook_support import load
from test_install import home, hook_command  # noqa: F401  (fixture)
from test_worker_lifecycle import wait_for, worker_env, worker_processes  # noqa: F401  (fixture)


def install_for_real(cwd) -> dict:
    """`claude-mem install --json` in its own process, as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "claude_mem", "install", "--json"], capture_output=True, text=True,
                          cwd=cwd, timeout=180, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_hook_command(command: str, payload: dict, cwd) -> subprocess.CompletedProcess:
    """A registered hook command, the way Claude Code runs it (`sh -c`, JSON on stdin, autostart on)."""
    env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "true", "CLAUDE_PROJECT_DIR": str(cwd)}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          env=env, cwd=cwd, timeout=60)


def lacks_packages_without_site(python: str) -> bool:
    """The installed hooks run `python -I -S`: without site-packages this (editable) install cannot see
    the worker's packages, which is what made the first hook build a venv."""
    probe = "import importlib.util, sys; sys.path.append(sys.argv[1]); print(importlib.util.find_spec('starlette'))"
    done = subprocess.run([python, "-I", "-S", "-c", probe, environment.PACKAGE_PARENT], capture_output=True,
                          text=True, timeout=60)
    return done.stdout.strip() == "None"


def test_the_first_hook_after_install_builds_no_venv(home, worker_env):  # noqa: F811
    data_dir = str(worker_env)
    project = home.parent / "work" / "shop"
    report = install_for_real(project)
    recorded = report["environment"]
    assert recorded["python"] == sys.executable and recorded["complete"] is True and recorded["missing"] == {}
    assert recorded["version"] == __version__ and recorded["package"] == environment.PACKAGE_PARENT
    assert interpreter.usable(data_dir) == recorded
    assert lacks_packages_without_site(sys.executable), "the hook's interpreter sees the packages: nothing proven"

    start = {**load("SessionStart.json"), "cwd": str(project)}
    result = run_hook_command(hook_command(home / ".claude" / "settings.json", "SessionStart"), start, project)
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    message = json.loads(result.stdout)["systemMessage"]
    assert "first run" not in message and "setting up" not in message  # no environment to wait for
    state = wait_for(lambda: (lambda found: found if found.running else None)(control.state(data_dir)), 60,
                     "the worker")
    [pid] = worker_processes(worker_env)
    assert pid == state.pid and psutil.Process(pid).cmdline()[0] == sys.executable
    assert state.info["python"] == sys.executable
    assert state.info["started_for"] == f"the hooks in {home / '.claude' / 'settings.json'}"
    assert not os.path.exists(environment.venv_dir(data_dir))
    assert not os.path.exists(environment.progress_path(data_dir))
    hooks_log = open(os.path.join(data_dir, "logs", "hooks.log"), encoding="utf-8").read()
    assert "spawned pid" in hooks_log and "bootstrapping" not in hooks_log and "building" not in hooks_log
    status = json.loads(subprocess.run([sys.executable, "-m", "claude_mem", "status", "--json"], capture_output=True,
                                       text=True, timeout=60, cwd=project).stdout)
    assert status["environment"]["recorded"]["python"] == sys.executable and status["environment"]["state"] == "absent"


def test_a_second_install_keeps_the_record_as_it_was(home, data_dir):  # noqa: F811
    project = home.parent / "work" / "shop"
    first = install_for_real(project)["environment"]
    before = open(interpreter.record_path(str(data_dir)), "rb").read()
    assert install_for_real(project)["environment"] == first
    assert open(interpreter.record_path(str(data_dir)), "rb").read() == before


def test_the_check_names_what_is_missing_and_a_record_without_a_dependency_is_not_used(data_dir):
    directory = str(data_dir)
    groups = interpreter.requirements(environment.CHECKOUT)
    assert {"starlette", "uvicorn", "psutil", "mcp"} <= set(groups[interpreter.REQUIRED])
    assert "onnxruntime" in groups["search"] and "psycopg" in groups["team"]
    checked = interpreter.check({interpreter.REQUIRED: ["starlette", "no-such-distribution-27"],
                                 "search": ["numpy", "another-missing-27"]})
    assert checked["missing"] == {interpreter.REQUIRED: ["no-such-distribution-27 (not installed)"],
                                  "search": ["another-missing-27 (not installed)"]}
    interpreter.record(directory, sys.executable, environment.PACKAGE_PARENT, checked)
    assert interpreter.usable(directory) is None
    assert interpreter.problem(interpreter.read(directory)) == "it lacks no-such-distribution-27 (not installed)"

    # Only an extra missing: the worker still runs there (without what the extra brings).
    interpreter.record(directory, sys.executable, environment.PACKAGE_PARENT,
                       interpreter.check({interpreter.REQUIRED: ["starlette"], "search": ["another-missing-27"]}))
    assert interpreter.usable(directory) is not None


@pytest.mark.parametrize("change, why", [
    ({"python": "/nonexistent/python3"}, "its interpreter /nonexistent/python3 is gone"),
    ({"version": "0.0.1"}, "recorded by claude-mem 0.0.1"),
])
def test_a_record_of_a_gone_interpreter_or_another_version_is_not_used(data_dir, change, why):
    directory = str(data_dir)
    interpreter.record(directory, sys.executable, environment.PACKAGE_PARENT, {"missing": {}, "seconds": 0.1})
    assert interpreter.usable(directory) is not None
    found = {**interpreter.read(directory), **change}
    with open(interpreter.record_path(directory), "w", encoding="utf-8") as handle:
        json.dump(found, handle)
    assert interpreter.usable(directory) is None and why in interpreter.problem(found)


def test_uninstall_forgets_the_record(home, data_dir):  # noqa: F811
    from click.testing import CliRunner

    from claude_mem.cli.group import cli

    project = home.parent / "work" / "shop"
    install_for_real(project)
    assert os.path.exists(interpreter.record_path(str(data_dir)))
    report = json.loads(CliRunner().invoke(cli, ["uninstall", "--json"]).output)
    assert report["environment_forgotten"] is True and not os.path.exists(interpreter.record_path(str(data_dir)))


@pytest.mark.slow
def test_a_real_claude_session_after_install_starts_the_worker_without_a_venv(home, worker_env):  # noqa: F811
    """`claude-mem install`, then a real `claude -p` session (offline, against the loopback fake) with
    autostart on: its SessionStart hook starts the worker on the recorded interpreter, and no venv is
    built; `claude-mem uninstall` then leaves nothing running."""
    from claude_support import run_claude
    from fakes.anthropic_api import FakeAnthropic

    data_dir = str(worker_env)
    project = home.parent / "work" / "shop"
    install_for_real(project)
    with FakeAnthropic() as fake:
        result = run_claude("please write then edit hello.txt", fake.url, str(project), str(home),
                            {"CLAUDE_MEM_AUTOSTART": "true"}, plugin_dir=None)
    assert result.returncode == 0, result.stderr[-2000:]
    state = wait_for(lambda: (lambda found: found if found.running else None)(control.state(data_dir)), 60,
                     "the worker")
    assert state.info["python"] == sys.executable and psutil.Process(state.pid).cmdline()[0] == sys.executable
    assert state.info["started_for"] == f"the hooks in {home / '.claude' / 'settings.json'}"
    assert not os.path.exists(environment.venv_dir(data_dir))
    done = subprocess.run([sys.executable, "-m", "claude_mem", "uninstall"], capture_output=True, text=True,
                          cwd=project, timeout=120)
    assert done.returncode == 0 and f"worker stopped (pid {state.pid})" in done.stdout, done.stdout + done.stderr
    assert not worker_processes(worker_env)
