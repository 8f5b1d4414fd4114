"""The plugin inside the REAL Claude Code CLI (the one bundled with claude-agent-sdk), driven
offline against the loopback fake Messages API: the hooks fire with real payloads and capture."""

import json

import pytest

from claude_support import run_claude
from fakes.anthropic_api import FakeAnthropic
from hook_support import events, rows


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return path


@pytest.mark.slow
def test_a_real_session_is_captured_through_the_plugin(data_dir, project, tmp_path):
    with FakeAnthropic() as fake:
        result = run_claude("please write then edit hello.txt", fake.url, str(project), str(tmp_path / "home"),
                            {"CLAUDE_MEM_AUTOSTART": "false"})
        bodies = [json.dumps(request.body) for request in fake.posts("/v1/messages")]
    assert result.returncode == 0, result.stderr[-2000:]
    assert (project / "hello.txt").read_text().startswith("goodbye")
    assert rows(data_dir, "SELECT project, status FROM sessions") == [(str(project), "completed")]
    found = events(data_dir)
    assert [e["kind"] for e in found] == ["prompt", "tool", "tool", "tool", "summarize", "session_end"]
    assert [e["payload"]["tool_name"] for e in found[1:4]] == ["Write", "Edit", "Bash"]
    assert all(e["event_key"].startswith("toolu_fake") for e in found[1:4])
    assert found[4]["payload"]["last_assistant_message"].startswith("Done: scenario finished")
    # The session-start context reached the model.
    assert any("claude-mem" in body and "no memory" in body for body in bodies)


@pytest.mark.slow
def test_a_failing_tool_is_captured_as_tool_failure(data_dir, project, tmp_path):
    with FakeAnthropic() as fake:
        result = run_claude("fail a command", fake.url, str(project), str(tmp_path / "home"),
                            {"CLAUDE_MEM_AUTOSTART": "false"})
    assert result.returncode == 0, result.stderr[-2000:]
    failures = [e for e in events(data_dir) if e["kind"] == "tool_failure"]
    assert len(failures) == 1
    assert "Exit code 3" in failures[0]["payload"]["error"]
