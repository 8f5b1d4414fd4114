"""Capture hooks: real recorded payloads in, the right rows out (DESIGN §2–§4)."""

import json
import os

import pytest

from claude_mem.hooks import runner
from conftest import REPO
from hook_support import EVENT_HOOK, events, fixture_files, hook_for, load, rows, run_hook

SESSION_EDIT = fixture_files("session-edit")
REGISTERED = [
    path for path in fixture_files() + fixture_files("v2.0.77") if hook_for(load(path)) is not None
]
UNREGISTERED = [path for path in fixture_files() + fixture_files("v2.0.77") if hook_for(load(path)) is None]


def handle(payload: dict, hook: str | None = None, env: dict | None = None) -> int:
    """One hook call in this process (the subprocess path is covered by the end-to-end tests)."""
    return runner.handle(hook or hook_for(payload), json.dumps(payload).encode(), env or {})


@pytest.fixture(autouse=True)
def no_autostart(monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")


def test_session_edit_end_to_end_through_the_plugin_launcher(data_dir):
    outputs = {}
    for path in SESSION_EDIT:
        payload = load(path)
        result = run_hook(hook_for(payload), payload)
        assert result.returncode == 0
        assert result.stderr == b"", result.stderr
        outputs[path] = result.stdout
    for path, stdout in outputs.items():
        if "SessionStart" in path:
            reply = json.loads(stdout)
            assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
            assert reply["hookSpecificOutput"]["additionalContext"]
        else:
            assert stdout == b"", path
    session = rows(data_dir, "SELECT content_session_id, project, cwd, status, ended_at FROM sessions")
    assert session == [("2ffa905a-a2e0-44a2-9eda-18920feea975", "/home/dev/proj", "/home/dev/proj", "completed",
                        session[0][4])]
    assert session[0][4] is not None
    assert rows(data_dir, "SELECT prompt_number, text, private FROM prompts") == [(1, "edit hello.txt", 0)]
    found = events(data_dir)
    assert [e["kind"] for e in found] == ["prompt", "tool", "tool", "tool", "tool", "summarize", "session_end"]
    assert [e["payload"].get("tool_name") for e in found[1:5]] == ["Write", "Edit", "Read", "Bash"]
    assert all(e["prompt_number"] == 1 for e in found)


def test_event_payloads_follow_the_contract(data_dir):
    for path in SESSION_EDIT:
        assert handle(load(path)) == 0
    handle(load("PostToolUseFailure.json"))
    by_kind = {}
    for event in events(data_dir):
        by_kind.setdefault(event["kind"], event)
    assert by_kind["prompt"]["payload"] == {"prompt": "edit hello.txt", "prompt_number": 1}
    tool = by_kind["tool"]["payload"]
    assert set(tool) == {"tool_name", "tool_input", "tool_response", "is_interrupt", "tool_use_id", "cwd", "duration_ms"}
    assert tool["tool_use_id"] == by_kind["tool"]["event_key"] == "toolu_751bde96613d4801937599e6"
    assert tool["duration_ms"] == 13 and tool["is_interrupt"] is False and tool["cwd"] == "/home/dev/proj"
    failure = by_kind["tool_failure"]["payload"]
    assert set(failure) == {"tool_name", "tool_input", "error", "is_interrupt", "tool_use_id", "cwd", "duration_ms"}
    assert failure["error"] == "Exit code 3\nboom"
    assert by_kind["summarize"]["payload"] == {
        "last_assistant_message": "Done: scenario finished after 4 tool call(s)", "prompt_number": 1,
    }
    assert by_kind["session_end"]["payload"] == {"reason": "other"}


@pytest.mark.parametrize("path", REGISTERED)
def test_every_registered_fixture_is_stored(path, data_dir):
    payload = load(path)
    assert handle(payload) == 0
    sessions = rows(data_dir, "SELECT content_session_id FROM sessions")
    assert sessions == [(payload["session_id"],)]
    if payload["hook_event_name"] == "SessionStart":
        assert rows(data_dir, "SELECT COUNT(*) FROM pending_events") == [(0,)]
        return
    found = events(data_dir)
    assert len(found) == 1
    if payload.get("tool_use_id"):
        assert found[0]["event_key"] == payload["tool_use_id"]


@pytest.mark.parametrize("path", fixture_files("v1.0.128"))
def test_claude_code_1_0_128_payloads_do_not_crash(path, data_dir):
    payload = load(path)
    for hook in EVENT_HOOK.values():
        assert runner.handle(hook, json.dumps(payload).encode(), {}) == 0
    if hook_for(payload) not in (None, "session-start"):
        assert len(events(data_dir)) == 1  # no tool_use_id: keyed by a hash, still stored once


@pytest.mark.parametrize("path", UNREGISTERED)
def test_unregistered_events_write_nothing(path, data_dir):
    payload = load(path)
    for hook in set(EVENT_HOOK.values()):
        result = run_hook(hook, payload) if hook == "post-tool" else None
        if result is not None:
            assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
        else:
            assert handle(payload, hook) == 0
    assert not os.path.exists(data_dir) or os.listdir(data_dir) == []


def test_the_same_event_delivered_twice_is_one_event(data_dir):
    for _ in range(2):
        for path in SESSION_EDIT:
            handle(load(path))
    assert len(events(data_dir)) == 7
    assert rows(data_dir, "SELECT COUNT(*) FROM prompts") == [(1,)]


def test_prompts_are_numbered_per_session_and_tools_belong_to_the_current_prompt(data_dir):
    base = load("session-edit/02-UserPromptSubmit.json")
    tool = load("session-edit/06-PostToolUse.Bash.json")
    for number in range(1, 4):
        handle({**base, "prompt": f"prompt {number}", "prompt_id": f"p{number}"})
        handle({**tool, "tool_use_id": f"toolu_{number}", "prompt_id": f"p{number}"})
    handle({**base, "session_id": "other-session", "prompt": "elsewhere", "prompt_id": "q1"})
    numbers = rows(data_dir, "SELECT s.content_session_id, p.prompt_number, p.text FROM prompts p"
                             " JOIN sessions s ON s.id = p.session_id ORDER BY p.id")
    assert [row[1] for row in numbers] == [1, 2, 3, 1]
    tools = [e for e in events(data_dir) if e["kind"] == "tool"]
    assert [(e["event_key"], e["prompt_number"]) for e in tools] == [("toolu_1", 1), ("toolu_2", 2), ("toolu_3", 3)]


def test_same_prompt_text_in_two_turns_is_two_events_without_prompt_id(data_dir, tmp_path):
    """2.0.77 sends no prompt_id: the growing transcript tells the turns apart."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    payload = {**load("v2.0.77/UserPromptSubmit.json"), "transcript_path": str(transcript), "prompt": "continue"}
    handle(payload)
    handle(payload)  # a duplicate delivery: same transcript size
    transcript.write_text("{}\n{}\n")
    handle(payload)  # the next turn
    assert rows(data_dir, "SELECT prompt_number FROM prompts") == [(1,), (2,)]


def test_project_is_fixed_by_the_first_event(data_dir, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    start = {**load("session-edit/01-SessionStart.json"), "cwd": str(repo / "sub")}
    handle(start)
    handle({**load("session-edit/06-PostToolUse.Bash.json"), "cwd": str(tmp_path)})
    assert rows(data_dir, "SELECT project FROM sessions") == [(str(repo),)]
    handle({**start, "session_id": "s2"}, env={"CLAUDE_PROJECT_DIR": str(tmp_path)})
    assert rows(data_dir, "SELECT project FROM sessions WHERE content_session_id = 's2'") == [(str(tmp_path),)]


def test_skip_list_and_excluded_projects(data_dir, tmp_path, monkeypatch):
    todo = {**load("session-edit/06-PostToolUse.Bash.json"), "tool_name": "TodoWrite", "tool_use_id": "t1"}
    handle(todo)
    assert not os.path.exists(data_dir / "claude-mem.db")
    monkeypatch.setenv("CLAUDE_MEM_SKIP_TOOLS", "Bash,Read")
    handle(load("session-edit/06-PostToolUse.Bash.json"))
    handle(load("session-edit/03-PostToolUse.Write.json"))
    assert [e["payload"]["tool_name"] for e in events(data_dir)] == ["Write"]
    secret = tmp_path / "clients" / "secret-acme"
    secret.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_MEM_EXCLUDED_PROJECTS", json.dumps([str(tmp_path / "clients" / "secret-*")]))
    for path in SESSION_EDIT:
        handle({**load(path), "cwd": str(secret), "session_id": "excluded"})
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions WHERE content_session_id = 'excluded'") == [(0,)]


def test_oversized_fields_keep_head_and_tail(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_MAX_FIELD_CHARS", "1000")
    payload = load("session-edit/06-PostToolUse.Bash.json")
    payload["tool_response"]["stdout"] = "HEAD" + "x" * 100_000 + "TAIL"
    payload["tool_input"]["command"] = "y" * 5000
    handle(payload)
    stored = events(data_dir)[0]["payload"]
    stdout = stored["tool_response"]["stdout"]
    assert stdout.startswith("HEAD") and stdout.endswith("TAIL")
    assert "claude-mem cut 99008 chars" in stdout
    assert len(stdout) < 1100
    assert len(stored["tool_input"]["command"]) < 1100
    payload["tool_response"] = {f"field{i}": "z" * 900 for i in range(10)}
    payload["tool_use_id"] = "another"
    handle(payload)
    whole = events(data_dir)[1]["payload"]["tool_response"]
    assert isinstance(whole, str) and "claude-mem cut" in whole and len(whole) < 2100


def test_session_end_completes_and_a_resume_reactivates(data_dir):
    handle(load("session-edit/01-SessionStart.json"))
    handle(load("session-edit/08-SessionEnd.json"))
    assert rows(data_dir, "SELECT status FROM sessions") == [("completed",)]
    handle({**load("session-edit/01-SessionStart.json"), "source": "resume"})
    assert rows(data_dir, "SELECT status, ended_at FROM sessions") == [("active", None)]


def test_session_start_output_is_short_hook_json(data_dir):
    result = run_hook("session-start", load("SessionStart.json"))
    reply = json.loads(result.stdout)
    assert set(reply) <= {"hookSpecificOutput", "systemMessage"}
    assert set(reply["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert 0 < len(reply["hookSpecificOutput"]["additionalContext"]) < 10_000


def test_installed_entry_point_runs_the_same_hook(data_dir):
    import subprocess
    import sys

    entry = os.path.join(os.path.dirname(sys.executable), "claude-mem")
    payload = load("session-edit/06-PostToolUse.Bash.json")
    result = subprocess.run([entry, "hook", "post-tool"], input=json.dumps(payload).encode(),
                            capture_output=True, timeout=60, env={**os.environ, "CLAUDE_MEM_AUTOSTART": "false"})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert events(data_dir)[0]["event_key"] == payload["tool_use_id"]
    help_text = subprocess.run([entry, "hook", "--help"], capture_output=True, text=True, timeout=60)
    for hook in ("session-start", "user-prompt", "post-tool", "stop", "session-end"):
        assert hook in help_text.stdout


@pytest.mark.parametrize("how", ["launcher", "entry point"])
def test_hook_without_a_name_prints_usage_and_exits_0(how):
    """No hook name is a mistake a user makes by hand: usage on stderr, exit 0, no click import."""
    import subprocess
    import sys

    if how == "launcher":
        argv = ["python3", "-I", "-S", os.path.join(REPO, "scripts", "hook.py")]
    else:
        argv = [os.path.join(os.path.dirname(sys.executable), "claude-mem"), "hook"]
    result = subprocess.run(argv, input=b"", capture_output=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == b""
    assert b"Usage: claude-mem hook NAME" in result.stderr and b"session-start" in result.stderr
    assert b"Traceback" not in result.stderr


def test_hook_usage_does_not_import_click():
    import subprocess

    code = ("import sys; sys.path.insert(0, sys.argv[1]); from claude_mem.hooks.runner import run_from_argv;"
            " run_from_argv([]); run_from_argv(['--help']); print('click' in sys.modules, 'rich' in sys.modules)")
    result = subprocess.run(["python3", "-I", "-S", "-c", code, os.path.join(REPO, "src")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False False"
