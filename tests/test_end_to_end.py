"""The whole product, the way a user gets it: the real Claude Code CLI with this checkout as its
plugin, a real worker (offline observer), and a second session that starts with the first one's
memory. Only the Anthropic API is a loopback fake."""

import json
import os
import subprocess
import sys
import time

import pytest

from claude_support import run_claude
from fakes.anthropic_api import FakeAnthropic
from hook_support import rows

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
CLAUDE_MEM = os.path.join(os.path.dirname(sys.executable), "claude-mem")


def claude_mem(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([CLAUDE_MEM, *args], env=env, capture_output=True, text=True, timeout=120)


def wait_for_empty_queue(env: dict[str, str], timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        report = json.loads(claude_mem("status", "--json", env=env).stdout)
        events = report["store"]["counts"]["events"]
        if events["pending"] == 0 and events["claimed"] == 0 and events["done"] > 0:
            return report
        if time.monotonic() > deadline:
            raise AssertionError(f"the worker did not drain the queue: {events}")
        time.sleep(0.5)


def injected_texts(fake: FakeAnthropic) -> list[str]:
    """Every request body the CLI sent, as text (hook context travels inside them)."""
    return [json.dumps(request.body, ensure_ascii=False) for request in fake.posts("/v1/messages")]


def test_memory_flows_from_one_real_session_to_the_next(data_dir, tmp_path):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    home = str(tmp_path / "home")
    env = {**os.environ, "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0",
           "CLAUDE_MEM_AUTOSTART": "false", "CLAUDE_MEM_RETRY_BACKOFF_SECONDS": "0.1"}
    started = claude_mem("worker", "start", env=env)
    assert started.returncode == 0, started.stderr
    try:
        with FakeAnthropic() as fake:
            first = run_claude("please write then edit hello.txt", fake.url, str(project), home, env)
            assert first.returncode == 0, first.stderr[-2000:]
            assert any("no memory" in body for body in injected_texts(fake))

            wait_for_empty_queue(env)
            # How the offline observer splits the turn depends on when the worker sees the events.
            stored = rows(data_dir, "SELECT id, title FROM observations ORDER BY id")
            titles = [title for (_, title) in stored]
            assert titles and any("hello.txt" in title for title in titles), titles
            assert rows(data_dir, "SELECT request FROM summaries") == [("please write then edit hello.txt",)]
            assert rows(data_dir, "SELECT status, title FROM sessions") == [
                ("completed", "please write then edit hello.txt")]

            fake.requests.clear()
            second = run_claude("what did we change last time?", fake.url, str(project), home, env)
            assert second.returncode == 0, second.stderr[-2000:]
            bodies = injected_texts(fake)

        # The second session started with the first one's index, and `claude-mem context` agrees.
        rows_shown = [f"#{id_} " for id_, _ in stored]
        assert bodies and all(row in body and title[:30] in body
                              for body in bodies for row, title in zip(rows_shown, titles))
        context = claude_mem("context", "--project", str(project), env=env)
        assert context.returncode == 0, context.stderr
        assert all(title[:30] in context.stdout for title in titles)
        # The header ends with the minute it was made: the two were made at different moments.
        first_line = context.stdout.strip().splitlines()[0].rsplit(" · ", 1)[0]
        assert "project" in first_line and any(first_line in body for body in bodies)
        assert "mcp__plugin_persistent-memory_memory__" in context.stdout
    finally:
        stopped = claude_mem("worker", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
    status = json.loads(claude_mem("worker", "status", "--json", env=env).stdout)
    assert status.get("running") is False, status
