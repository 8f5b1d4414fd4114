"""The first hours of a new user, with the real Claude Code CLI: install from the local marketplace,
a `python3` with nothing but the standard library, and an empty data dir. The memory tools are there
from the first request of the first session (the MCP server needs the standard library only); the
plugin's environment is built in the background while the first session runs, and the second
session starts with what the first one left."""

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from claude_mem.runtime import control, environment
from claude_support import run_claude
from conftest import IN_CI, REPO
from fakes.anthropic_api import SEARCH_TOOL, FakeAnthropic
from hook_support import rows
from test_plugin_marketplace import fresh_clone, plugin_cli
from test_worker_lifecycle import wait_for

REAL_PIP_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "pip")  # read before HOME is isolated


def bare_python(directory: str) -> str:
    """A `python3` with the standard library only, like a system Python (a venv without pip)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", directory], check=True, timeout=120)
    python = os.path.join(directory, "bin", "python3")
    check = subprocess.run([python, "-c", "import mcp"], capture_output=True, timeout=60)
    assert check.returncode != 0, "the bare python3 must not have the mcp package"
    return python


def tool_results(bodies: list[dict]) -> list[dict]:
    return [block for body in bodies for message in body.get("messages", []) if isinstance(message.get("content"), list)
            for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]


def stop_everything(data_dir: str) -> None:
    """The worker, and a venv build still running, of this data dir."""
    control.stop(data_dir, timeout=30)
    for process in psutil.process_iter(["cmdline"]):
        if data_dir in " ".join(process.info["cmdline"] or []):
            process.kill()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_first_session_gets_the_memory_tools_and_the_second_starts_with_memory(data_dir, tmp_path, monkeypatch):
    home = marketplace_install(tmp_path)
    python3 = bare_python(str(tmp_path / "system-python"))
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / "notes.txt").write_text("spool files are renamed before ingest\n")
    if os.path.isdir(REAL_PIP_CACHE):
        monkeypatch.setenv("PIP_CACHE_DIR", REAL_PIP_CACHE)  # the download is not what is tested
    env = {"PATH": os.path.dirname(python3) + os.pathsep + os.environ["PATH"], "CLAUDE_MEM_AUTOSTART": "true",
           "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_RETRY_BACKOFF_SECONDS": "0.1"}
    directory = str(data_dir)
    try:
        with FakeAnthropic() as fake:
            began = time.monotonic()
            first = run_claude("please wait for the memory tools, then search memory for spool ingest", fake.url,
                               str(project), home, env, plugin_dir=None, timeout=300)
            first_seconds = time.monotonic() - began
            bodies = [r.body for r in fake.posts("/v1/messages") if isinstance(r.body, dict) and r.body.get("tools")]
        assert first.returncode == 0, first.stderr[-3000:]
        offered = [SEARCH_TOOL in {tool.get("name") for tool in body["tools"]} for body in bodies]
        # The session began before the environment existed, and its first request offers the tools.
        assert all(offered), offered
        waited = offered.index(True)
        result = tool_results(bodies)[-1]  # the search, after the model's work (Bash `sleep 1` calls)
        content = result["content"]
        shown = content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content)
        assert not result.get("is_error"), shown
        assert shown == "No observations stored for project shop yet.", shown  # the store exists, still empty
        progress = environment.read_progress(directory)
        print(f"first session: {first_seconds:.1f} s; memory tools offered from request {waited + 1} "
              f"(after ~{waited} s of work); venv stages so far: {progress.get('seconds')}")
        # The search needed no work first, so the session left nothing to observe: a first working session.
        with FakeAnthropic() as fake:
            work = run_claude("please write then edit hello.txt", fake.url, str(project), home, env, plugin_dir=None,
                              timeout=300)
        assert work.returncode == 0, work.stderr[-3000:]

        # The build goes on after the session: the whole environment, then the worker, which observes.
        wait_for(lambda: environment.venv_ready(directory), 900 if IN_CI else 600, "the full venv")
        state = wait_for(lambda: control.state(directory) if control.state(directory).running else None, 120,
                         "the worker started by the build")
        assert environment.venv_dir(directory) in " ".join(psutil.Process(state.pid).cmdline())
        assert environment.state(directory)["state"] == "ready"
        stages = environment.read_progress(directory)["last_seconds"]
        assert set(stages) == set(environment.STAGES) == {"venv", "worker"}
        print(f"venv build: {stages}")
        wait_for(lambda: rows(directory, "SELECT COUNT(*) FROM observations")[0][0] > 0
                 and not rows(directory, "SELECT COUNT(*) FROM pending_events WHERE status IN ('pending', 'claimed')")[0][0],
                 120, "the observer")
        titles = [title for (title,) in rows(directory, "SELECT title FROM observations")]

        with FakeAnthropic() as fake:
            second = run_claude("what do you remember about this project?", fake.url, str(project), home, env,
                                plugin_dir=None, timeout=300)
            texts = [json.dumps(r.body, ensure_ascii=False) for r in fake.posts("/v1/messages")]
        assert second.returncode == 0, second.stderr[-3000:]
        assert any("# claude-mem memory · project shop" in text and titles[0] in text for text in texts), titles
    finally:
        stop_everything(directory)


def marketplace_install(tmp_path) -> str:
    """A fresh HOME with the plugin installed from a local marketplace (a clone of this checkout), the
    memory search allowed as a user would allow it (`-p` mode refuses tools nobody allowed)."""
    home = str(tmp_path / "home")
    clone = fresh_clone(str(tmp_path / "clone"))
    assert plugin_cli("marketplace", "add", clone, home=home).returncode == 0
    installed = plugin_cli("install", "persistent-memory@persistent-memory", home=home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    settings_path = os.path.join(home, ".claude", "settings.json")
    with open(settings_path, encoding="utf-8") as handle:
        user_settings = json.load(handle)
    user_settings["permissions"] = {"allow": [SEARCH_TOOL]}
    with open(settings_path, "w", encoding="utf-8") as handle:
        json.dump(user_settings, handle)
    return home


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_three_second_first_session_lists_the_memory_tools(data_dir, tmp_path):
    """Right after a marketplace install, with a `python3` that has nothing but the standard library
    and no venv anywhere (autostart off: nothing builds one), a first session that lasts a few
    seconds — one search — is offered the memory tools in its very first request, and the search works."""
    home = marketplace_install(tmp_path)
    python3 = bare_python(str(tmp_path / "system-python"))
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    env = {"PATH": os.path.dirname(python3) + os.pathsep + os.environ["PATH"], "CLAUDE_MEM_AUTOSTART": "false"}
    with FakeAnthropic() as fake:
        began = time.monotonic()
        first = run_claude("search memory for spool ingest", fake.url, str(project), home, env, plugin_dir=None,
                           timeout=120)
        seconds = time.monotonic() - began
        bodies = [r.body for r in fake.posts("/v1/messages") if isinstance(r.body, dict) and r.body.get("tools")]
    assert first.returncode == 0, first.stderr[-3000:]
    assert bodies and SEARCH_TOOL in {tool.get("name") for tool in bodies[0]["tools"]}
    [result] = tool_results(bodies)
    content = result["content"]
    shown = content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content)
    assert not result.get("is_error"), shown
    assert shown.startswith(("No observations stored for project shop yet", "claude-mem has no memory stored yet")), shown
    assert not os.path.exists(environment.venv_dir(str(data_dir)))
    print(f"first session: {seconds:.1f} s, {len(bodies)} model requests, the tools in the first")


def session_start_message(data_dir, now: float | None = None) -> str:
    """The systemMessage of a session-start hook run the way the plugin runs it (`now`: the hook's
    clock, frozen at that moment, so an estimate does not depend on how long the hook took to start)."""
    payload = json.dumps({"session_id": "s-first", "transcript_path": "/tmp/t.jsonl", "cwd": str(data_dir),
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()
    hook = os.path.join(REPO, "scripts", "hook.py")
    argv = [sys.executable, "-I", "-S", hook, "session-start"]
    if now is not None:
        argv[3:] = ["-c", f"import runpy, sys, time; time.time = lambda: {now!r}; sys.argv = [{hook!r}, 'session-start']; "
                          f"runpy.run_path({hook!r}, run_name='__main__')"]
    result = subprocess.run(argv, input=payload, capture_output=True, timeout=60, env={**os.environ, "PYTHONSAFEPATH": "1"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["systemMessage"]


def write_progress(data_dir, **fields) -> None:
    os.makedirs(data_dir, exist_ok=True)
    with open(environment.progress_path(str(data_dir)), "w", encoding="utf-8") as handle:
        json.dump(fields, handle)


BUILDING_NOTICE = ("first run: memory tools and capture work now (this session is being recorded); setting up the "
                   "worker (observer, search by meaning) in the background, about %d s left; until then search is "
                   "by keyword")


def test_the_session_start_message_says_while_the_environment_builds(data_dir):
    """The memory tools and capture need no environment: the message says they work now, and that only
    the worker (and with it search by meaning) waits for the build."""
    now = time.time()
    write_progress(data_dir, pid=os.getpid(), started=now - 10, stage="worker", stage_started=now - 4,
                   last_seconds={"venv": 3, "worker": 30})
    message = session_start_message(data_dir, now)
    assert BUILDING_NOTICE % 26 in message, message
    write_progress(data_dir, pid=os.getpid(), started=now - 1, stage="venv", stage_started=now - 1,
                   last_seconds={"venv": 3, "worker": 30})
    assert BUILDING_NOTICE % 32 in session_start_message(data_dir, now)  # 2 s left of the venv, then 30


def test_the_session_start_message_names_a_failed_build_and_its_log(data_dir):
    write_progress(data_dir, pid=1, stage="worker", error="CalledProcessError: No matching distribution found for torch")
    message = session_start_message(data_dir)
    assert "could not set up its environment (CalledProcessError: No matching distribution found for torch)" in message
    assert os.path.join(str(data_dir), "logs", "venv-build.log") in message


def test_no_message_once_built_or_when_nothing_was_started(data_dir):
    assert "first run" not in session_start_message(data_dir)
    assert "could not" not in session_start_message(data_dir)


def test_estimates_follow_the_last_build(data_dir):
    now = time.time()
    write_progress(data_dir, pid=os.getpid(), started=now - 1, stage="venv", stage_started=now - 1,
                   last_seconds={"venv": 5, "worker": 40})
    found = environment.state(str(data_dir), now)
    assert (found["state"], found["stage"], found["step"], found["steps"], found["remaining"]) == \
        ("building", "venv", 1, 2, 44)
    assert "tools" not in found
    line = environment.describe(found)
    assert line.startswith("building: step 1 of 2, creating the environment, about 2% (since "), line
    assert line.endswith("; memory tools and capture work now; until the worker (observer, search by meaning) runs, "
                         "search is by keyword"), line
    write_progress(data_dir, pid=os.getpid(), started=now - 10, stage="worker", stage_started=now - 8,
                   last_seconds={"venv": 2, "worker": 1e999})  # infinity, to Python's json: typical times instead
    assert environment.state(str(data_dir), now)["remaining"] == environment.DEFAULT_SECONDS["worker"] - 8
    write_progress(data_dir, pid=2 ** 22 + 12345, started=now, stage="worker", stage_started=now)  # no such process
    assert environment.state(str(data_dir))["state"] == "interrupted"
    write_progress(data_dir, stage="worker", pid=os.getpid(), error="boom")
    assert environment.state(str(data_dir))["state"] == "failed"
    environment.clear_failure(str(data_dir))
    assert environment.state(str(data_dir))["state"] == "absent"


def test_a_progress_file_from_a_three_stage_build_is_read(data_dir):
    """Builds before this version had a "tools" stage (`mcp` alone, before the rest): a file they wrote
    is read as the two stages of now, its times counted in the worker stage that does that work now."""
    now = time.time()
    old_times = {"venv": 3, "tools": 10, "worker": 30}
    write_progress(data_dir, pid=os.getpid(), started=now - 5, stage="tools", stage_started=now - 2,
                   last_seconds=old_times)
    found = environment.state(str(data_dir), now)
    assert (found["state"], found["stage"], found["step"], found["steps"], found["label"], found["remaining"]) == \
        ("building", "worker", 2, 2, "installing the worker and the search model", 38)
    assert environment.describe(found).startswith("building: step 2 of 2, installing the worker and the search model, "
                                                  "about 11% (since ")
    assert BUILDING_NOTICE % 38 in session_start_message(data_dir, now)
    write_progress(data_dir, pid=os.getpid(), started=now - 1, stage="venv", stage_started=now - 1,
                   last_seconds=old_times)
    assert environment.state(str(data_dir), now)["remaining"] == 2 + 40  # the venv's last 2 s, then tools + worker
    write_progress(data_dir, pid=2 ** 22 + 12345, stage="tools", stage_started=now)  # its builder is gone
    assert environment.describe(environment.state(str(data_dir))) == \
        "build interrupted while installing the worker and the search model; the next session start builds it again"
    write_progress(data_dir, pid=1, stage="tools", error="CalledProcessError: No matching distribution found for mcp")
    failed = environment.state(str(data_dir))
    assert (failed["state"], failed["stage"], failed["step"]) == ("failed", "worker", 2)
    assert environment.describe(failed).startswith("build failed while installing the worker and the search model: "
                                                   "CalledProcessError: No matching distribution found for mcp")
    message = session_start_message(data_dir)
    assert "could not set up its environment (CalledProcessError: No matching distribution found for mcp)" in message


def test_a_build_records_its_stages_and_forgets_a_retired_one(data_dir, monkeypatch):
    """The real build, to the point where it needs the network: the venv stage runs (a real `python -m
    venv`), then pip — pointed at no index — fails the worker stage; the progress file names the two
    stages of now, and the last build's times keep no "tools" entry for the next estimate to count twice."""
    write_progress(data_dir, stage="ready", last_seconds={"venv": 3, "tools": 10, "worker": 30})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(data_dir))
    assert environment.build(str(data_dir)) is False
    progress = environment.read_progress(str(data_dir))
    assert progress["stage"] == "worker" and progress["error"].startswith("CalledProcessError")
    assert set(progress["seconds"]) == {"venv"}
    assert progress["last_seconds"] == {"venv": 3, "worker": 40}
    assert os.path.exists(environment.venv_python(str(data_dir))) and not environment.venv_ready(str(data_dir))
    with open(os.path.join(str(data_dir), environment.BUILD_LOG), encoding="utf-8") as handle:
        log = handle.read()
    assert " venv: " in log and " worker: " in log and " tools: " not in log


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '{"stage": 7, "pid": "x", "started": "soon"}',
                                     '{"stage": "tools", "pid": true, "last_seconds": [1]}', "\x00" * 100,
                                     '{"stage": ["tools"], "started": 1e300}', '{"stage": {"tools": 1}}'])
def test_a_damaged_progress_file_is_read_as_no_build(data_dir, content):
    os.makedirs(data_dir, exist_ok=True)
    with open(environment.progress_path(str(data_dir)), "w", encoding="utf-8") as handle:
        handle.write(content)
    assert environment.state(str(data_dir))["state"] in ("absent", "interrupted")
    assert environment.session_notice(str(data_dir)) is None
