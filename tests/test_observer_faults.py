"""Faults on the real wire protocols, through the whole pipeline: the `anthropic` and `openai`
providers talk to their loopback fakes while the queue retries, fails visibly or pauses — and
nothing is lost or stored twice."""

import asyncio

import pytest

from claude_mem import settings as settings_module
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.anthropic import AnthropicProvider
from claude_mem.observer.providers.openai import OpenAIProvider
from fakes.anthropic_api import FakeAnthropic
from fakes.openai_api import FakeOpenAI
from fakes.server import Fault
from observer_support import connect, drain, load_session_edit

KEY = "sk-test-fault-key"


@pytest.fixture(params=["anthropic", "openai"])
def backend(request):
    fake_class = FakeAnthropic if request.param == "anthropic" else FakeOpenAI
    with fake_class(api_key=KEY) as fake:
        yield request.param, fake


def pipeline_for(kind: str, fake, conn, **overrides) -> Pipeline:
    values = settings_module.load()
    values.update(retry_backoff_seconds=0.0, max_attempts=3, observer_timeout_seconds=2, provider=kind)
    values.update(overrides)
    if kind == "anthropic":
        values.update(anthropic_api_key=KEY, anthropic_base_url=fake.url)
        provider = AnthropicProvider(values)
    else:
        values.update(openai_api_key=KEY, openai_base_url=fake.url + "/v1")
        provider = OpenAIProvider(values)
    return Pipeline(conn, values, provider)


def observer_calls(fake) -> int:
    return sum(1 for request in fake.posts() if "claude-mem observer v1" in str(request.body))


def statuses(conn) -> dict:
    return dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())


def exactly_once(conn) -> bool:
    """No event has results from two replies (commits), and no observation is stored twice."""
    twice = conn.execute(
        "SELECT s.event_id FROM observation_sources s JOIN observations o ON o.id = s.observation_id"
        " GROUP BY s.event_id HAVING COUNT(DISTINCT o.created_at) > 1")
    repeated = conn.execute(
        "SELECT session_id, title, narrative FROM observations GROUP BY 1, 2, 3 HAVING COUNT(*) > 1")
    return not twice.fetchall() and not repeated.fetchall()


def transient(kind: str) -> list[Fault]:
    overloaded = 529 if kind == "anthropic" else 503
    return [Fault("status", 429, headers={"retry-after": "0"}), Fault("status", 500),
            Fault("status", overloaded), Fault("truncate"), Fault("garbage")]


def test_transient_faults_are_retried_and_stored_once(backend, data_dir):
    kind, fake = backend
    conn = connect(data_dir)
    load_session_edit(conn)
    fake.inject(*transient(kind))
    pipeline = pipeline_for(kind, fake, conn, max_attempts=10)
    asyncio.run(drain(pipeline))
    assert statuses(conn) == {"done": 7}
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 1
    assert conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1
    assert "hello.txt" in conn.execute("SELECT group_concat(title) FROM observations").fetchone()[0]
    assert exactly_once(conn)
    assert not fake.faults  # every scripted fault was met by a real request


def test_a_persistent_server_error_ends_visibly_failed(backend, data_dir):
    kind, fake = backend
    conn = connect(data_dir)
    load_session_edit(conn)
    fake.inject(*[Fault("status", 500) for _ in range(50)])
    pipeline = pipeline_for(kind, fake, conn)
    asyncio.run(drain(pipeline))
    rows = conn.execute("SELECT status, attempts, last_error FROM pending_events WHERE kind != 'session_end'").fetchall()
    assert rows and all(status == "failed" and attempts == 3 and "500" in error for status, attempts, error in rows)
    assert observer_calls(fake) <= 3 * 2  # a few batches, each tried max_attempts times: no storm
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 0


def test_a_rejected_key_pauses_the_queue_without_a_retry_storm(backend, data_dir):
    kind, fake = backend
    conn = connect(data_dir)
    load_session_edit(conn)
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    fake.inject(*[Fault("status", 401, body=body) for _ in range(20)])
    pipeline = pipeline_for(kind, fake, conn)

    async def steps() -> list[bool]:
        return [await pipeline.step() for _ in range(5)]

    asyncio.run(steps())
    assert observer_calls(fake) == 1
    assert "failed" not in statuses(conn)  # paused, not burned: every event waits for working credentials
    assert conn.execute("SELECT MAX(attempts) FROM pending_events").fetchone()[0] == 0
    health = asyncio.run(pipeline.health())
    assert health["ok"] is False
