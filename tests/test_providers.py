"""The `anthropic` and `openai` observers against loopback fakes of their real wire protocols; what a
first turn sends; and the `offline` and `fake` observers answering from a request's data."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.server import Fault

from claude_mem import settings as settings_module
from claude_mem.observer import prompts
from claude_mem.observer.conversations import Conversations
from claude_mem.observer.events import RenderedEvent, rendered_event
from claude_mem.observer.parser import parse
from claude_mem.observer.prompts import turn_request
from claude_mem.observer.provider import (
    PROMPT_HEADER,
    AuthError,
    ObserverRequest,
    ProviderError,
    QuotaExhausted,
    RateLimited,
    SessionInfo,
    TurnEnd,
)
from claude_mem.observer.providers.anthropic import AnthropicProvider
from claude_mem.observer.providers.offline import OfflineProvider
from claude_mem.observer.providers.openai import OpenAIProvider
from claude_mem.store.models import PendingEvent
from fakes.observer_provider import FakeProvider

KEY = "sk-test-observer-key"
INFO = SessionInfo("content-1", "/home/dev/proj", user_request="edit hello.txt")


def batch(n: int, files: list[str], command: str) -> ObserverRequest:
    events = [f'<event id="{n}{i}" kind="tool" tool="Edit" file="{f}" status="edited">\n-old {f}\n+new {f}\n</event>'
              for i, f in enumerate(files)]
    events.append(f'<event id="{n}9" kind="tool" tool="Bash" status="ok">\n$ {command}\nstdout: ok\n</event>')
    return ObserverRequest("claude-mem observer v1\n\nNew events in the session (oldest first):\n\n" + "\n".join(events))


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake  # type: ignore[misc]


def make(kind: str, url: str, stream: bool = True, **overrides: object) -> AnthropicProvider | OpenAIProvider:
    values = dict(settings_module.DEFAULTS, observer_timeout_seconds=2, **overrides)
    if kind == "anthropic":
        values["anthropic_api_key"] = overrides.get("anthropic_api_key", KEY)
        values["anthropic_base_url"] = url
        return AnthropicProvider(values, stream=stream)
    values["openai_api_key"] = overrides.get("openai_api_key", KEY)
    values["openai_base_url"] = url + "/v1"
    return OpenAIProvider(values, stream=stream)


@pytest.fixture(params=[("anthropic", True), ("anthropic", False), ("openai", True), ("openai", False)],
                ids=["anthropic-sse", "anthropic-json", "openai-sse", "openai-json"])
def backend(request, fake_anthropic, fake_openai):  # type: ignore[no-untyped-def]
    kind, stream = request.param
    fake = fake_anthropic if kind == "anthropic" else fake_openai
    return kind, stream, fake


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_reply_is_built_from_the_request_and_tokens_come_from_usage(backend) -> None:
    kind, stream, fake = backend

    async def go():  # type: ignore[no-untyped-def]
        provider = make(kind, fake.url, stream)
        session = await provider.open(INFO)
        first = await session.send(batch(1, ["src/app.py"], "pytest -q tests/test_app.py"))
        second = await session.send(batch(2, ["src/db.py", "README.md"], "make lint"))
        await provider.aclose()
        return first, second

    first, second = run(go())
    assert "<title>Worked on src/app.py</title>" in first.text
    assert "<files_modified><file>src/app.py</file></files_modified>" in first.text
    assert "Ran pytest -q tests/test_app.py" in first.text
    assert "src/db.py" in second.text and "README.md" in second.text and "src/app.py" not in second.text
    posts = fake.posts()
    assert len(posts) == 2
    # usage is the fake's estimate of what it received, so it grows with the resent history
    assert 0 < first.input_tokens < second.input_tokens
    assert first.output_tokens > 0
    body = posts[1].body
    assert body["model"] == ("claude-haiku-4-5" if kind == "anthropic" else "llama3.1")
    assert bool(body.get("stream")) is stream
    roles = [m["role"] for m in body["messages"]]
    assert roles[-3:] == ["user", "assistant", "user"]
    assert "tools" not in body


def test_auth_header_forms(fake_anthropic, fake_openai) -> None:
    async def go():  # type: ignore[no-untyped-def]
        for provider in (make("anthropic", fake_anthropic.url), make("openai", fake_openai.url)):
            session = await provider.open(INFO)
            await session.send(batch(1, ["a.py"], "true"))
            await provider.aclose()

    run(go())
    anthropic_headers = fake_anthropic.posts()[0].headers
    assert anthropic_headers["authorization"].startswith("Bearer ***")  # anthropic 2.x: Bearer, not x-api-key
    assert KEY not in json.dumps([r.headers for r in fake_anthropic.requests + fake_openai.requests])
    assert fake_openai.posts()[0].headers["authorization"].startswith("Bearer ***")


FAULTS = [
    (Fault("status", 429, headers={"retry-after": "7"},
           body={"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded"}}),
     RateLimited, True),
    (Fault("status", 529, body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
     RateLimited, True),
    (Fault("status", 401, body={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
     AuthError, False),
    (Fault("status", 403, body={"error": {"type": "permission_error", "message": "forbidden"}}), AuthError, False),
    (Fault("status", 402, body={"error": {"type": "billing_error", "message": "payment required"}}), QuotaExhausted, False),
    (Fault("status", 429, body={"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                                          "code": "insufficient_quota"}}), QuotaExhausted, False),
    (Fault("status", 400, body={"type": "error", "error": {"type": "invalid_request_error",
                                                           "message": "Your credit balance is too low"}}), QuotaExhausted, False),
    (Fault("status", 500), ProviderError, True),
    (Fault("status", 503, body="<html>unavailable</html>"), ProviderError, True),
    (Fault("timeout", delay=4), ProviderError, True),
    (Fault("truncate"), ProviderError, True),
    (Fault("garbage"), ProviderError, True),
    (Fault("drop"), ProviderError, True),
]


@pytest.mark.parametrize(("fault", "error", "retryable"), FAULTS, ids=[f"{f.kind}-{f.status}-{e.__name__}" for f, e, _ in FAULTS])
def test_faults_raise_the_right_error_then_recover(backend, fault, error, retryable) -> None:
    kind, stream, fake = backend

    async def go():  # type: ignore[no-untyped-def]
        provider = make(kind, fake.url, stream)
        session = await provider.open(INFO)
        await session.send(batch(1, ["a.py"], "true"))
        fake.inject(fault)
        with pytest.raises(ProviderError) as caught:
            await session.send(batch(2, ["b.py"], "false"))
        after = await session.send(batch(3, ["c.py"], "true"))
        await provider.aclose()
        return caught.value, after

    raised, after = run(go())
    assert type(raised) is error, raised
    assert raised.retryable is retryable
    if fault.status == 429 and fault.headers:
        assert raised.retry_after == 7.0
    # one request per call: the SDKs' own retries are off, so a 401 is one request, not a storm
    assert len(fake.posts()) == 3
    # the failed batch was not recorded in the history; the next call carries turns 1 and 3 only
    last = json.dumps(fake.posts()[-1].body)
    assert "b.py" not in last and "a.py" in last and "c.py" in last
    assert "c.py" in after.text


def test_missing_key_is_an_auth_error_without_a_request(fake_anthropic, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    async def go():  # type: ignore[no-untyped-def]
        provider = make("anthropic", fake_anthropic.url, anthropic_api_key="")
        health = await provider.health()
        with pytest.raises(AuthError):
            await provider.open(INFO)
        return health

    health = run(go())
    assert not health.ok and "API key" in health.reason
    assert fake_anthropic.requests == []


def test_key_from_environment(fake_anthropic, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

    async def go():  # type: ignore[no-untyped-def]
        provider = make("anthropic", fake_anthropic.url, anthropic_api_key="")
        health = await provider.health()
        session = await provider.open(INFO)
        reply = await session.send(batch(1, ["env.py"], "true"))
        await provider.aclose()
        return health, reply

    health, reply = run(go())
    assert health.ok and "ANTHROPIC_API_KEY" in health.reason and KEY not in health.reason
    assert "env.py" in reply.text


def test_openai_without_key_talks_to_a_local_server() -> None:
    with FakeOpenAI() as fake:
        async def go():  # type: ignore[no-untyped-def]
            provider = make("openai", fake.url, openai_api_key="")
            session = await provider.open(INFO)
            reply = await session.send(batch(1, ["local.py"], "ollama list"))
            await provider.aclose()
            return reply, await provider.health()

        reply, health = run(go())
    assert "local.py" in reply.text and health.ok and "no key" in health.reason


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_200_event_session_keeps_request_size_bounded(kind, fake_anthropic, fake_openai) -> None:
    fake = fake_anthropic if kind == "anthropic" else fake_openai

    async def go():  # type: ignore[no-untyped-def]
        provider = make(kind, fake.url, observer_history_turns=4)
        session = await provider.open(INFO)
        replies = []
        for n in range(200):
            replies.append(await session.send(batch(n, [f"src/module_{n:03d}.py"], f"pytest tests/test_{n:03d}.py")))
        await provider.aclose()
        return replies

    replies = run(go())
    sizes = [r.raw_size for r in fake.posts()]
    assert len(sizes) == 200
    # grows while the history and the recap fill, then stays flat (the recap is capped)
    late = sizes[120:]
    assert max(late) - min(late) < 0.05 * max(late), (min(late), max(late))
    assert max(sizes) < 4 * max(sizes[:10])
    tokens = [r.input_tokens for r in replies]
    assert max(tokens[120:]) - min(tokens[120:]) < 0.05 * max(tokens[120:])
    last = fake.posts()[-1].body
    text = json.dumps(last)
    assert "module_199" in text and "module_100" not in text  # old turns left the window...
    assert "Worked on src/module_150.py" in text  # ...but their titles stay in the recap
    assert len([m for m in last["messages"] if m["role"] == "user"]) == 5


def test_token_bench_reports_batching_cheaper_per_event() -> None:
    from bench.bench_observer_tokens import main

    report: Any = main([])
    for name in ("session-edit", "synthetic-200"):
        for measure in ("conversation", "anthropic_wire"):
            figures = report[name][measure]
            assert figures["batched"]["calls"] < figures["one_event_per_call"]["calls"]
            assert 0 < figures["ratio"] < 1
        # a stateless API is re-sent the system prompt and the history; a conversation is not
        assert (report[name]["conversation"]["batched"]["input_tokens"]
                < report[name]["anthropic_wire"]["batched"]["input_tokens"])


def test_a_first_turn_sends_the_standing_instructions_once(backend) -> None:
    """System prompt and first user turn together carry the role, the rules and the contract once."""
    kind, stream, fake = backend

    async def go():  # type: ignore[no-untyped-def]
        provider = make(kind, fake.url, stream)
        conversations = Conversations(provider, 1)
        conversation = await conversations.get(INFO)
        events = [PendingEvent(1, 1, "tool", 1, {"tool_name": "Bash", "tool_input": {"command": "make test"},
                                                 "tool_response": {"stdout": "ok"}})]
        await conversation.session.send(turn_request(events, root=INFO.project, opening=conversation.opening))
        await conversations.close_all()
        await provider.aclose()

    run(go())
    [post] = fake.posts()
    body = post.body
    sent = [body.get("system") or ""] + [m["content"] for m in body["messages"]]
    everything = "\n".join(str(part) for part in sent)
    for text in (prompts.ROLE, prompts.WHAT_TO_RECORD, prompts.CONTRACT, "Project: /home/dev/proj"):
        assert everything.count(text) == 1, text
    user = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert len(user) == 1 and user[0].startswith(PROMPT_HEADER + "\n\nNew events")
    assert "make test" in user[0] and prompts.CONTRACT not in user[0]


# -- offline and fake: from the request's data, never its text ---------------------------------------


@pytest.mark.parametrize(("error", "line"), [
    ("Exit code 1\n...\nFAILED tests/test_http.py::test_retry - AssertionError: 3 != 4\n1 failed, 4 passed",
     "FAILED tests/test_http.py::test_retry - AssertionError: 3 != 4"),
    ("Exit code 2\nTraceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'invoice'", "KeyError: 'invoice'"),
    ("Exit code 127\nbash: ruff: command not found", "bash: ruff: command not found"),
    ("Exit code 1\nsomething odd happened", "something odd happened"),
    ("Exit code 1", "Exit code 1"),
])
def test_a_failure_is_named_by_its_telling_line_not_by_the_exit_code(error: str, line: str) -> None:
    """Claude Code's PostToolUseFailure `error` starts with `Exit code N`; the title needs the line after."""
    failing = rendered_event(PendingEvent(3, 1, "tool_failure", 1, {
        "tool_name": "Bash", "tool_input": {"command": "make check"}, "tool_response": None, "error": error}))
    assert failing.error_line == line


def test_a_rendered_event_holds_what_its_text_shows() -> None:
    failing = rendered_event(PendingEvent(3, 1, "tool_failure", 1, {
        "tool_name": "Bash", "tool_input": {"command": "pytest -q\n  --lf", "description": "rerun failures"},
        "tool_response": {"stdout": "\n1 failed\nmore", "stderr": "E  assert 1 == 2"}, "error": "Exit code 1"}))
    assert (failing.command, failing.description, failing.status) == ("pytest -q\n  --lf", "rerun failures", "failed")
    assert (failing.error_line, failing.output_line) == ("E  assert 1 == 2", "1 failed")
    assert "$ pytest -q" in failing.text and 'status="failed"' in failing.text
    created = rendered_event(PendingEvent(4, 1, "tool", 1, {
        "tool_name": "Write", "tool_input": {"file_path": "/p/big.py", "content": "\n".join(f"x{n}" for n in range(900))},
        "tool_response": {"type": "create"}}), "/p")
    assert created.file == "big.py" and created.status == "created"
    assert created.added and len(created.added) == created.text.count("\n+")  # the lines it shows, not all 900
    edited = rendered_event(PendingEvent(5, 1, "tool", 1, {
        "tool_name": "Edit", "tool_input": {"file_path": "/p/a.py", "old_string": "a = 1", "new_string": "a = 2"}}), "/p")
    assert (edited.removed, edited.added) == (("a = 1",), ("a = 2",))


def test_offline_and_fake_answer_from_the_events_data_not_any_text() -> None:
    """Events whose body text is empty and a request text that names nothing: the data is enough."""
    events = (
        RenderedEvent(id=1, kind="tool", tool="Edit", file="src/a.py", status="edited", removed=("a = 1",),
                      added=("a = 2",)),
        RenderedEvent(id=2, kind="tool_failure", tool="Bash", status="failed", command="make check",
                      error_line="missing header foo.h"),
    )
    request = ObserverRequest(PROMPT_HEADER, events=events, turn_end=TurnEnd("fix the build", "Done."))
    info = SessionInfo("content-x", "/p")

    async def ask(provider: OfflineProvider | FakeProvider) -> str:
        session = await provider.open(info)
        return (await session.send(request)).text

    offline = parse(run(ask(OfflineProvider())))
    titles = " | ".join(o.title for o in offline.observations)
    assert "Edited src/a.py: “a = 1” → “a = 2”" in titles and "missing header foo.h" in titles
    assert offline.summary is not None and offline.summary.request == "fix the build"
    assert offline.summary.files_edited == ("src/a.py",) and "Done." in offline.summary.notes
    fake = parse(run(ask(FakeProvider(script={}))))
    [observation] = fake.observations
    assert "src/a.py" in observation.title and "`make check`" in observation.title
    assert "ids 1, 2" in observation.narrative
    assert fake.summary is not None and fake.summary.request == "fix the build"
