"""Running the real Claude Code CLI (bundled with claude-agent-sdk) offline against a loopback fake."""

import os
import subprocess

from claude_mem.observer.providers.cli import bundled_cli
from conftest import REPO, require

DUMMY_KEY = "sk-dummy-for-the-fake"


def claude_cli() -> str:
    path = bundled_cli()
    require(path is not None, "the Claude Code CLI bundled with claude-agent-sdk is missing")
    return path  # type: ignore[return-value]


def cli_env(url: str, home: str | None = None, key: str = DUMMY_KEY) -> dict[str, str]:
    """The environment of a headless, offline CLI run (reference/real-claude-code.md §4)."""
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": key,
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ENABLE_TOOL_SEARCH": "false",
    }
    if home is not None:
        env["HOME"] = home
    return env


def run_claude(prompt: str, url: str, project: str, home: str, extra_env: dict[str, str] | None = None,
               timeout: float = 120, plugin_dir: str | None = REPO) -> subprocess.CompletedProcess:
    """`claude -p PROMPT` in `project` with this checkout loaded as a plugin (`plugin_dir=None`: only
    the plugins installed in `home`)."""
    env = {**os.environ, **cli_env(url, home), **(extra_env or {})}
    env.pop("CLAUDECODE", None)
    argv = [claude_cli(), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash,Write,Edit,Read"]
    if plugin_dir is not None:
        argv += ["--plugin-dir", plugin_dir]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=timeout)


def run_edit_session(project, home: str, data_dir, plugin_dir: str | None = REPO) -> list[dict]:
    """The fake's write-then-edit scenario as a real `claude -p` session with the plugin (from
    `plugin_dir`, or installed when None); checks it ran and was captured whole; its events."""
    import json

    from fakes.anthropic_api import FakeAnthropic
    from hook_support import events, rows

    with FakeAnthropic() as fake:
        result = run_claude("please write then edit hello.txt", fake.url, str(project), home,
                            {"CLAUDE_MEM_AUTOSTART": "false"}, plugin_dir=plugin_dir)
        bodies = [json.dumps(request.body) for request in fake.posts("/v1/messages")]
    assert result.returncode == 0, result.stderr[-2000:]
    assert (project / "hello.txt").read_text().startswith("goodbye")
    assert rows(data_dir, "SELECT project, status FROM sessions") == [(str(project), "completed")]
    found = events(data_dir)
    assert [e["kind"] for e in found] == ["prompt", "tool", "tool", "tool", "summarize", "session_end"]
    assert [e["payload"]["tool_name"] for e in found[1:4]] == ["Write", "Edit", "Bash"]
    # The session-start context reached the model.
    assert any("claude-mem" in body and "no memory" in body for body in bodies)
    return found
