"""The plugin inside the REAL Claude Code CLI (the one bundled with claude-agent-sdk), driven
offline against the loopback fake Messages API: the hooks fire with real payloads and capture."""


import pytest

from claude_support import run_claude, run_edit_session
from fakes.anthropic_api import FakeAnthropic
from hook_support import events


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return path


@pytest.mark.slow
def test_a_real_session_is_captured_through_the_plugin(data_dir, project, tmp_path):
    found = run_edit_session(project, str(tmp_path / "home"), data_dir)
    assert all(e["event_key"].startswith("toolu_fake") for e in found[1:4])
    assert found[4]["payload"]["last_assistant_message"].startswith("Done: scenario finished")


@pytest.mark.slow
def test_a_failing_tool_is_captured_as_tool_failure(data_dir, project, tmp_path):
    with FakeAnthropic() as fake:
        result = run_claude("fail a command", fake.url, str(project), str(tmp_path / "home"),
                            {"CLAUDE_MEM_AUTOSTART": "false"})
    assert result.returncode == 0, result.stderr[-2000:]
    failures = [e for e in events(data_dir) if e["kind"] == "tool_failure"]
    assert len(failures) == 1
    assert "Exit code 3" in failures[0]["payload"]["error"]
