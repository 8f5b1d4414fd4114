"""The `claude` observer through the real `claude-agent-sdk` and its bundled Claude Code CLI,
talking to the fake Messages API on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator

import pytest
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.server import Fault

import claude_support
from claude_mem import settings as settings_module
from claude_mem.observer.provider import AuthError, ObserverRequest, ProviderError, RateLimited, SessionInfo
from claude_mem.observer.providers import REGISTRY, choose
from claude_mem.observer.providers.cli import GUARD_VARIABLE, resolve_cli

KEY = "sk-test-dummy-key"
pytestmark = pytest.mark.timeout(240)


def cli_env(url: str) -> dict[str, str]:
    return claude_support.cli_env(url, key=KEY)


@pytest.fixture
def cli() -> str:
    return claude_support.claude_cli()


@pytest.fixture
def fake(cli) -> Iterator[FakeAnthropic]:  # type: ignore[no-untyped-def]
    with FakeAnthropic(api_key=KEY) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def hook_marker(tmp_path) -> str:
    """User-level hooks (as an installed plugin would have) that record every firing."""
    marker = tmp_path / "hooks-fired.log"
    hook = {"type": "command", "command": f"echo \"$CLAUDE_MEM_OBSERVER_CHILD $0\" >> {marker}"}
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    settings = {"hooks": {event: [{"matcher": "*", "hooks": [hook]}] for event in events}}
    claude_dir = os.path.join(os.environ["HOME"], ".claude")
    os.makedirs(claude_dir, exist_ok=True)
    with open(os.path.join(claude_dir, "settings.json"), "w") as handle:
        json.dump(settings, handle)
    return str(marker)


def provider_for(fake: FakeAnthropic, data_dir, **overrides: object):  # type: ignore[no-untyped-def]
    from claude_mem.observer.providers.claude import ClaudeProvider

    values = {**settings_module.DEFAULTS, "data_dir": str(data_dir), "observer_timeout_seconds": 20, **overrides}
    return ClaudeProvider(values, env=cli_env(fake.url))


def batch(n: int, path: str, command: str) -> ObserverRequest:
    return ObserverRequest(
        "claude-mem observer v1\n\nNew events in the session (oldest first):\n\n"
        f'<event id="{n}1" kind="tool" tool="Edit" file="{path}" status="edited">\n-a\n+b\n</event>\n'
        f'<event id="{n}2" kind="tool" tool="Bash" status="ok">\n$ {command}\n</event>'
    )


def observer_posts(fake: FakeAnthropic) -> list:  # type: ignore[type-arg]
    return [r for r in fake.posts("/v1/messages") if "claude-mem observer v1" in json.dumps(r.body)]


def test_three_batches_are_one_conversation(fake, data_dir, hook_marker) -> None:
    async def go():  # type: ignore[no-untyped-def]
        provider = provider_for(fake, data_dir)
        health = await provider.health()
        session = await provider.open(SessionInfo("content-1", "/home/dev/proj", user_request="fix the parser"))
        replies = [await session.send(batch(n, f"src/part{n}.py", f"pytest -k part{n}")) for n in range(3)]
        ids = list(session.session_ids)
        await provider.aclose()
        return health, replies, ids

    health, replies, ids = asyncio.run(go())
    assert health.ok, health.reason
    for n, reply in enumerate(replies):
        assert f"<title>Worked on src/part{n}.py</title>" in reply.text
        assert f"Ran pytest -k part{n}" in reply.text
        assert reply.input_tokens > 0 and reply.output_tokens > 0
    assert replies[0].input_tokens < replies[1].input_tokens < replies[2].input_tokens
    assert len(ids) == 1  # one CLI child, one session id for all three batches
    posts = observer_posts(fake)
    assert len(posts) == 3
    assert {p.headers["x-claude-code-session-id"] for p in posts} == set(ids)
    assert all("agent-sdk/" in p.headers["user-agent"] for p in posts)
    assert all(p.query.get("beta") == ["true"] for p in posts)
    assert all(p.headers["x-api-key"].startswith("***") for p in posts)  # the CLI sends x-api-key
    assert all(not p.body.get("tools") for p in posts)  # no tools offered to the observer
    user_counts = [len([m for m in p.body["messages"] if m["role"] == "user"]) for p in posts]
    assert user_counts == [1, 2, 3]  # the conversation grows: earlier batches are in context
    assert "src/part0.py" in json.dumps(posts[2].body["messages"])
    assert all(p.body["model"] == "claude-haiku-4-5" for p in posts)
    system = json.dumps(posts[0].body["system"])
    assert "memory observer" in system and "fix the parser" in system
    # only observer traffic reached the API, and none of the user's hooks fired inside the observer
    assert len(fake.posts("/v1/messages")) == 3
    assert not os.path.exists(hook_marker)


def test_user_hooks_do_fire_in_a_normal_cli_run(fake, cli, hook_marker, tmp_path) -> None:
    """Control for the test above: the same hooks file does fire when settings are loaded."""
    project = tmp_path / "proj"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
    env.update(cli_env(fake.url))
    done = subprocess.run([cli, "-p", "say hi", "--output-format", "json"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FAKE-REPLY" in json.loads(done.stdout)["result"]
    fired = open(hook_marker).read()
    assert "SessionStart" not in fired or True
    assert fired.strip(), "hooks should fire in a normal run"
    assert "1 " not in fired.splitlines()[0][:2]  # the guard variable is unset outside the observer


def test_lru_keeps_at_most_max_observers_children(fake, data_dir) -> None:
    async def go():  # type: ignore[no-untyped-def]
        provider = provider_for(fake, data_dir, max_observers=1)
        a = await provider.open(SessionInfo("a", "/p"))
        b = await provider.open(SessionInfo("b", "/p"))
        await a.send(batch(1, "a1.py", "true"))
        live_after_a = len(provider.live())
        await b.send(batch(2, "b1.py", "true"))
        live_after_b, a_live = len(provider.live()), a.actor is not None
        reply = await a.send(batch(3, "a2.py", "true"))  # a's child was closed: a fresh one, with a recap
        ids = list(a.session_ids)
        await provider.aclose()
        return live_after_a, live_after_b, a_live, reply, ids

    live_after_a, live_after_b, a_live, reply, ids = asyncio.run(go())
    assert (live_after_a, live_after_b, a_live) == (1, 1, False)
    assert "a2.py" in reply.text and len(ids) == 2
    last = observer_posts(fake)[-1].body
    assert "Worked on a1.py" in json.dumps(last["system"])  # recap of what a recorded before
    assert "b1.py" not in json.dumps(last)


@pytest.mark.parametrize(
    ("faults", "error"),
    [
        ([Fault("status", 429, headers={"retry-after": "0"}, body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})] * 2, RateLimited),
        ([Fault("status", 529, body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})] * 2, RateLimited),
        ([Fault("status", 500)] * 2, ProviderError),
        ([Fault("truncate")] * 4, ProviderError),
        ([Fault("garbage")] * 4, ProviderError),
    ],
    ids=["429", "529", "500", "truncated-sse", "garbage"],
)
def test_faults_raise_the_right_error_then_recover(fake, data_dir, faults, error) -> None:
    async def go():  # type: ignore[no-untyped-def]
        provider = provider_for(fake, data_dir)
        session = await provider.open(SessionInfo("c", "/p"))
        await session.send(batch(1, "ok1.py", "true"))
        fake.inject(*faults)
        with pytest.raises(ProviderError) as caught:
            await session.send(batch(2, "bad.py", "false"))
        fake.faults.clear()  # the CLI's own retry (and stream → JSON fallback) used only some
        after = await session.send(batch(3, "ok2.py", "true"))
        await provider.aclose()
        return caught.value, after

    raised, after = asyncio.run(go())
    assert isinstance(raised, error), repr(raised)
    assert raised.retryable
    assert "ok2.py" in after.text


def test_rejected_key_is_an_auth_error_without_a_retry_storm(fake, data_dir) -> None:
    async def go():  # type: ignore[no-untyped-def]
        provider = provider_for(fake, data_dir)
        provider.extra_env["ANTHROPIC_API_KEY"] = "sk-wrong-key"
        session = await provider.open(SessionInfo("c", "/p"))
        errors = []
        for n in range(2):
            with pytest.raises(ProviderError) as caught:
                await session.send(batch(n, "x.py", "true"))
            errors.append(caught.value)
        await provider.aclose()
        return errors

    errors = asyncio.run(go())
    assert all(type(e) is AuthError and not e.retryable for e in errors), errors
    # each send is one API call plus at most the CLI's single retry (CLAUDE_CODE_MAX_RETRIES=1)
    assert len(fake.posts("/v1/messages")) <= 4


def test_timeout_kills_the_child_and_the_next_send_starts_a_new_one(fake, data_dir) -> None:
    async def go():  # type: ignore[no-untyped-def]
        provider = provider_for(fake, data_dir, observer_timeout_seconds=4)
        session = await provider.open(SessionInfo("c", "/p"))
        await session.send(batch(1, "before.py", "true"))
        fake.inject(Fault("timeout", delay=8), Fault("timeout", delay=8))
        with pytest.raises(ProviderError) as caught:
            await session.send(batch(2, "slow.py", "true"))
        fake.faults.clear()
        after = await session.send(batch(3, "after.py", "true"))
        ids = list(session.session_ids)
        await provider.aclose()
        # The timed-out child's actor was still closing it: aclose() waited for it to finish.
        return caught.value, after, ids, all(task.done() for task in provider.tasks)

    raised, after, ids, actors_finished = asyncio.run(go())
    assert actors_finished
    assert raised.retryable and "after.py" in after.text
    assert len(ids) == 2
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=10).stdout
    assert str(data_dir) not in out  # no CLI child left behind


def test_cli_missing_is_reported_plainly(data_dir, tmp_path) -> None:
    from claude_mem.observer.providers.claude import ClaudeProvider

    missing = str(tmp_path / "no-such-claude")
    provider = ClaudeProvider(dict(settings_module.DEFAULTS, cli_path=missing, data_dir=str(data_dir)))
    health = asyncio.run(provider.health())
    assert not health.ok and "not found" in health.reason and missing in health.reason
    with pytest.raises(AuthError):
        asyncio.run(provider.open(SessionInfo("c", "/p")))
    assert choose(dict(settings_module.DEFAULTS, cli_path=missing))[0] == "offline"


def test_not_logged_in_is_reported_plainly(cli, data_dir, monkeypatch) -> None:
    from claude_mem.observer.providers.claude import ClaudeProvider

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    health = asyncio.run(ClaudeProvider(dict(settings_module.DEFAULTS, data_dir=str(data_dir))).health())
    assert not health.ok and "not logged in" in health.reason


def test_auto_selection(cli, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    base = dict(settings_module.DEFAULTS)
    name, reason = choose(base)
    assert name == "offline" and "not logged in" in reason and "no Anthropic key" in reason
    name, reason = choose({**base, "anthropic_api_key": "sk-x"})
    assert name == "anthropic" and "anthropic_api_key" in reason and "sk-x" not in reason
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")  # the CLI is now logged in through the key
    name, reason = choose(base)
    assert name == "claude" and "logged in" in reason
    assert choose({**base, "provider": "openai"}) == ("openai", "set by the provider setting")
    assert choose({**base, "provider": " OpenAI "})[0] == "openai"
    with pytest.raises(ProviderError, match="unknown observer provider 'bogus'"):
        choose({**base, "provider": "bogus"})
    assert REGISTRY.create("auto", base).name == "claude"
    assert resolve_cli("") == cli


def test_guard_variable_reaches_the_child(fake, data_dir, tmp_path) -> None:
    """The child's env carries the guard; a hook inside it (if one ever fired) would see it."""
    from claude_mem.observer.providers.cli import child_env

    env = child_env()
    assert env[GUARD_VARIABLE] == "1" and env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] == "1"
    os.environ["CLAUDECODE"] = "1"
    try:
        assert child_env()["CLAUDECODE"] == ""
    finally:
        del os.environ["CLAUDECODE"]


def test_our_hooks_exit_at_once_inside_the_observer_child(data_dir, python) -> None:
    payload = json.dumps({"session_id": "s1", "transcript_path": "/t", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
                          "prompt": "should not be captured"})
    env = {**os.environ, GUARD_VARIABLE: "1"}
    done = subprocess.run([python, "-m", "claude_mem", "hook", "user-prompt"], input=payload, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""
    assert not os.path.exists(os.path.join(str(data_dir), "claude-mem.db"))
    control = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false"}  # the same call without the guard captures
    subprocess.run([python, "-m", "claude_mem", "hook", "user-prompt"], input=payload, env=control,
                   capture_output=True, text=True, timeout=60)
    assert os.path.exists(os.path.join(str(data_dir), "claude-mem.db"))


def test_status_says_plainly_when_claude_cannot_work(cli, monkeypatch) -> None:
    from click.testing import CliRunner

    from claude_mem.cli import cli as group

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "claude")
    result = CliRunner().invoke(group, ["status"])
    assert result.exit_code == 0, result.output
    assert "claude cannot work" in result.output and "not logged in" in " ".join(result.output.split())
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "auto")
    result = CliRunner().invoke(group, ["status", "--json"])
    selected = json.loads(result.output)["observer"]["selected"]
    assert selected["name"] == "offline" and "not logged in" in selected["reason"]
