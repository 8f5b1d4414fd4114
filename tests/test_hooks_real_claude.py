"""The plugin inside the REAL Claude Code CLI (the one bundled with claude-agent-sdk), driven
offline against the loopback fake Messages API: the hooks fire with real payloads and capture."""

import importlib.util
import json
import os
import subprocess

import pytest

from conftest import REPO, require
from fakes.anthropic_api import FakeAnthropic
from hook_support import events, rows


def bundled_cli() -> str:
    spec = importlib.util.find_spec("claude_agent_sdk")
    path = os.path.join(os.path.dirname(spec.origin), "_bundled", "claude") if spec and spec.origin else ""
    require(bool(path) and os.access(path, os.X_OK), "the Claude Code CLI bundled with claude-agent-sdk is missing")
    return path


def run_claude(prompt: str, fake: FakeAnthropic, project, home) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "sk-dummy-for-the-fake",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ENABLE_TOOL_SEARCH": "false",
        "CLAUDE_MEM_AUTOSTART": "false",
    }
    return subprocess.run(
        [bundled_cli(), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash,Write,Edit,Read",
         "--plugin-dir", REPO],
        cwd=str(project), env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return path


@pytest.mark.slow
def test_a_real_session_is_captured_through_the_plugin(data_dir, project, tmp_path):
    with FakeAnthropic() as fake:
        result = run_claude("please write then edit hello.txt", fake, project, tmp_path / "home")
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
        result = run_claude("fail a command", fake, project, tmp_path / "home")
    assert result.returncode == 0, result.stderr[-2000:]
    failures = [e for e in events(data_dir) if e["kind"] == "tool_failure"]
    assert len(failures) == 1
    assert "Exit code 3" in failures[0]["payload"]["error"]
