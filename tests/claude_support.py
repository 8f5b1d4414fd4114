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
