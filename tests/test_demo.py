"""`make demo` is the first command of the README: CI runs the script it runs, and checks the story it tells."""

import json
import os
import re
import signal
import subprocess
import sys

import psutil
import pytest

from conftest import REPO

SCRIPTS = os.path.join(REPO, "scripts")
SCRIPT = os.path.join(SCRIPTS, "demo.py")


def load_story():
    """scripts/demo_story.py, imported the way demo.py imports it (from beside it)."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    import demo_story

    return demo_story


def section(out: str, number: int) -> str:
    """The output of the demo's step `number` (up to the next step's heading)."""
    start = out.index(f"\n{number}. ")
    end = out.find(f"\n{number + 1}. ", start)
    return out[start:end if end != -1 else len(out)]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_the_story_payloads_have_the_recorded_shape(tmp_path):
    """Every payload carries exactly the keys Claude Code 2.1.330 sends for its event (the recordings)."""
    story = load_story()
    project = str(tmp_path / story.PROJECT_NAME)
    os.makedirs(project)
    first, second = story.build(project, str(tmp_path / "home"))
    recorded = {"SessionStart": "SessionStart.json", "UserPromptSubmit": "UserPromptSubmit.json",
                "PostToolUse": "PostToolUse.json", "PostToolUseFailure": "PostToolUseFailure.json",
                "Stop": "Stop.json", "SessionEnd": "SessionEnd.json"}
    keys = {}
    for event, name in recorded.items():
        with open(os.path.join(REPO, "tests", "fixtures", "hook-payloads", name)) as handle:
            keys[event] = set(json.load(handle)) - {"_captured_with"}
    events = first.events + second.events
    assert len(first.events) >= 31 and {payload["hook_event_name"] for _, payload in events} == set(recorded)
    for _hook, payload in events:
        assert set(payload) == keys[payload["hook_event_name"]], payload
        assert payload["cwd"] == project and payload["transcript_path"].startswith(str(tmp_path / "home"))
        path = (payload.get("tool_input") or {}).get("file_path")
        assert path is None or os.path.isfile(path)  # every path of the story is real
    responses = {}  # tool -> the keys of its recorded tool_input and tool_response
    for name in ("03-PostToolUse.Write.json", "04-PostToolUse.Edit.json", "05-PostToolUse.Read.json",
                 "06-PostToolUse.Bash.json"):
        with open(os.path.join(REPO, "tests", "fixtures", "hook-payloads", "session-edit", name)) as handle:
            recorded_tool = json.load(handle)
        responses[recorded_tool["tool_name"]] = (set(recorded_tool["tool_input"]), set(recorded_tool["tool_response"]))
    for _hook, payload in first.events:
        if payload["hook_event_name"] == "PostToolUse" and payload["tool_name"] in responses:
            given, answered = responses[payload["tool_name"]]
            assert given <= set(payload["tool_input"]) and set(payload["tool_response"]) == answered, payload
            if payload["tool_name"] == "Read":
                assert set(payload["tool_response"]["file"]) == {"filePath", "content", "numLines", "startLine",
                                                                 "totalLines"}
    tools = [payload["tool_name"] for _, payload in first.events if "tool_name" in payload]
    assert {"Read", "Edit", "Write", "Bash", "Grep"} <= set(tools)
    failures = [payload for _, payload in first.events if payload["hook_event_name"] == "PostToolUseFailure"]
    assert any("pytest" in payload["tool_input"]["command"] for payload in failures)
    assert all(payload["error"].startswith("Exit code 1\n") for payload in failures)
    assert sum(payload["hook_event_name"] == "Stop" for _, payload in first.events) == len(story.PROMPTS)


@pytest.mark.slow
def test_make_demo_tells_the_story_end_to_end(tmp_path):
    story = load_story()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run([sys.executable, SCRIPT], env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout

    # session 1 went through the real hooks, and the worker's observer turned all of it into memory
    os.makedirs(tmp_path / "story")
    first, _second = story.build(str(tmp_path / "story"), str(tmp_path / "home"))
    calls, queued = len(first.events), len(first.events) - 1  # SessionStart queues nothing
    assert queued >= 30
    assert f"{calls} hook calls: {queued} events queued for the observer." in out
    processed = re.search(r"(\d+) events processed, (\d+) failed → (\d+) observations, (\d+) summaries", out)
    assert processed, out
    assert processed.groups() == (str(queued), "0", processed.group(3), str(len(story.PROMPTS)))
    observations = int(processed.group(3))
    assert observations >= 4
    vectors = re.search(r"vectors for search by meaning: (\d+) of (\d+)", out)
    assert vectors and vectors.group(1) == vectors.group(2) != "0"

    # session 2 starts with the newest notes, and the older one its prompt needs is added to the prompt
    context = section(out, 3)
    assert "# claude-mem memory · project invoice-sync" in context
    assert f"## Recent observations (3 of {observations}, oldest first)" in context
    for number in range(observations - 2, observations + 1):
        assert f"│ #{number} " in context
    assert f"{observations - 3} older observation(s) are not listed above" in context
    prompt = section(out, 4)
    assert "stored notes of this project that match the prompt" in prompt
    assert re.search(r"│ #2 \S+ bugfix .*attempt", prompt)

    # searches, timeline, viewer
    assert "#2" in section(out, 5) and "1–" in section(out, 5)
    meaning = section(out, 6)
    assert "No match for 'the job crashed'" in meaning  # no word in common
    assert re.search(r"\$ claude-mem search --mode semantic .*\n(.*\n)*.*#1 .*discovery.*invoice_sync", meaning)
    timeline = section(out, 7)
    assert "▶ │ #2" in timeline and "S2" in timeline
    url = re.search(r"viewer: (http://127\.0\.0\.1:\d+)/", out)
    started = re.search(r"worker started: pid (\d+), (http://127\.0\.0\.1:\d+)", out)
    assert url and started and url.group(1) == started.group(2)

    # everything it started is gone
    assert f"worker stopped (pid {started.group(1)})" in out
    assert gone(int(started.group(1)))
    assert not any(name.startswith("claude-mem-demo-") for name in os.listdir(tmp_path))
    assert "claude plugin install persistent-memory@persistent-memory" in out


@pytest.mark.slow
def test_ctrl_c_stops_the_worker_and_removes_the_temp_dir(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    # its own process group, like a terminal's foreground job: Ctrl-C reaches the demo and its children
    demo = subprocess.Popen([sys.executable, SCRIPT], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    pid = None
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            found = re.search(r"worker started: pid (\d+)", line)
            if found:
                pid = int(found.group(1))
                os.killpg(demo.pid, signal.SIGINT)
                break
        out, err = demo.communicate(timeout=120)
    finally:
        if demo.poll() is None:
            demo.kill()
    assert pid is not None
    assert demo.returncode == 130, out + err
    assert "demo interrupted" in err and f"worker stopped (pid {pid})" in out
    assert gone(pid)
    assert not any(name.startswith("claude-mem-demo-") for name in os.listdir(tmp_path))


def test_a_failing_step_exits_non_zero_with_a_clear_message_and_cleans_up(tmp_path):
    """A `claude-mem` that fails (here a stand-in beside the Python running the demo) stops the demo at once."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    fake = bin_dir / "claude-mem"
    fake.write_text("#!/bin/sh\necho 'database is locked' >&2\nexit 3\n")
    fake.chmod(0o755)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run([str(bin_dir / "python"), SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "demo failed: `claude-mem hook session-start` exited with 3: database is locked" in result.stderr
    assert not any(name.startswith("claude-mem-demo-") for name in os.listdir(tmp_path))
