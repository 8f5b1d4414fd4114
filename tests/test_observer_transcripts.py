"""The `claude` observer leaves no transcripts (issue 30, item 7): its conversations, run through the real
claude-agent-sdk and the bundled Claude Code CLI against the fake Messages API, write no session file
under `<config dir>/projects/` — the files `claude --resume` lists — and cannot be resumed.

The control is a plain `claude -p` run with the same HOME (and CLAUDE_CONFIG_DIR): it does leave its
session file there and resumes, so the place looked at is the right one."""

import asyncio
import glob
import json
import os
import subprocess

import pytest
from tests.fakes.anthropic_api import FakeAnthropic

import claude_support
from claude_mem.observer.provider import SessionInfo
from test_providers_claude import KEY, batch, cli_env, provider_for

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=["home", "config-dir"])
def config_dir(request, tmp_path, monkeypatch) -> str:
    """Where Claude Code keeps its state: `$HOME/.claude`, or CLAUDE_CONFIG_DIR (both temp dirs here)."""
    if request.param == "home":
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        return os.path.join(os.environ["HOME"], ".claude")
    path = str(tmp_path / "claude-config")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", path)
    return path


def session_files(config_dir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(config_dir, "projects", "**", "*.jsonl"), recursive=True))


def claude_p(cli: str, url: str, cwd: str, *args: str) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
    env.update(cli_env(url))
    return subprocess.run([cli, "-p", *args, "--output-format", "json"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_observer_conversations_leave_no_session_that_claude_resume_would_list(data_dir, config_dir, tmp_path):
    cli = claude_support.claude_cli()
    with FakeAnthropic(api_key=KEY) as fake:
        async def observe() -> list[str]:
            provider = provider_for(fake, data_dir)
            session = await provider.open(SessionInfo("content-1", str(tmp_path), user_request="fix the parser"))
            for n in range(2):
                reply = await session.send(batch(n, f"src/part{n}.py", f"pytest -k part{n}"))
                assert f"Worked on src/part{n}.py" in reply.text
            ids = list(session.session_ids)
            await provider.aclose()
            return ids

        observer_ids = asyncio.run(observe())
        assert len(observer_ids) == 1
        assert session_files(config_dir) == []
        assert not glob.glob(os.path.join(config_dir, "**", f"{observer_ids[0]}*"), recursive=True)
        project = tmp_path / "proj"
        project.mkdir()
        resumed = claude_p(cli, fake.url, str(project), "--resume", observer_ids[0], "go on")
        assert resumed.returncode != 0 and "No conversation found" in resumed.stdout + resumed.stderr
        # control: a user's own session is written there, and resumes
        done = claude_p(cli, fake.url, str(project), "say hi")
        assert done.returncode == 0, done.stderr[-2000:]
        own = json.loads(done.stdout)["session_id"]
        assert [os.path.basename(path) for path in session_files(config_dir)] == [f"{own}.jsonl"]
        again = claude_p(cli, fake.url, str(project), "--resume", own, "go on")
        assert again.returncode == 0, again.stderr[-2000:]
