"""The observer pipeline against a real SQLite store, driven directly with the offline and fake providers."""

import asyncio
import dataclasses
import json
import time

import pytest

from claude_mem import settings as settings_module
from claude_mem.domain import iso
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.prompts import turn_request
from claude_mem.observer.provider import PROMPT_HEADER, SessionInfo
from claude_mem.observer.providers.offline import OfflineProvider
from claude_mem.store import changes, queue
from claude_mem.store.models import PendingEvent
from claude_mem.store.results import mark_idle_sessions
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_prompt, add_session, connect, drain, load_session_edit


def make_settings(**overrides):
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "max_attempts": 3}, **overrides)
    return values


def run(pipeline):
    return asyncio.run(drain(pipeline))


def tool(command, ok=True, stdout="", error=""):
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "is_interrupt": False,
               "tool_use_id": None, "cwd": "/p", "duration_ms": 5}
    if ok:
        payload["tool_response"] = {"stdout": stdout, "stderr": "", "interrupted": False}
    else:
        payload["error"] = error
    return ("tool" if ok else "tool_failure"), payload


def statuses(conn):
    return dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())


def test_offline_golden_session_edit(data_dir):
    conn = connect(data_dir)
    load_session_edit(conn)
    published = []
    pipeline = Pipeline(conn, make_settings(provider="offline"), OfflineProvider(),
                        publish=lambda kind, data: published.append((kind, data)))
    assert run(pipeline) == 2
    assert statuses(conn) == {"done": 7}
    rows = conn.execute("SELECT type, title, narrative, files_modified, prompt_number FROM observations").fetchall()
    assert 1 <= len(rows) <= 3
    kind, title, narrative, files_modified, prompt_number = rows[0]
    assert "hello.txt" in title and "tests passed" in title
    assert "goodbye from fake model" in title and kind in ("change", "feature")
    assert json.loads(files_modified) == ["hello.txt"] and prompt_number == 1
    request, completed, files_edited = conn.execute("SELECT request, completed, files_edited FROM summaries").fetchone()
    assert request == "edit hello.txt" and "hello.txt" in completed and json.loads(files_edited) == ["hello.txt"]
    status, title, provider, ended = conn.execute(
        "SELECT status, title, observer_provider, ended_at FROM sessions").fetchone()
    assert (status, title, provider) == ("completed", "edit hello.txt", "offline") and ended
    # every observation links to the events it came from, and the Read alone made none of its own
    assert conn.execute("SELECT COUNT(DISTINCT event_id) FROM observation_sources").fetchone()[0] == 6
    # The pipeline publishes the queue's counts; its rows reach the stream through the change log, as every write does.
    assert {k for k, _ in published} == {"queue"}
    logged = [kind for kind, _ in changes.after(conn, 0, 100).rows]
    assert logged.count("observation") == len(rows) and logged.count("summary") == 1 and logged.count("prompt") == 1


def test_offline_routine_reads_alone_record_nothing(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-reads")
    add_prompt(conn, sid, "look around")
    add_event(conn, sid, "tool", {"tool_name": "Read", "tool_input": {"file_path": "/home/dev/proj/a.py"},
                                  "tool_response": {"file": {"content": "x = 1"}}}, "r1")
    add_event(conn, sid, *tool("ls -la"), key="r2")
    assert run(Pipeline(conn, make_settings(), OfflineProvider())) == 1
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 0
    assert statuses(conn) == {"done": 3}


def test_offline_failing_then_passing_is_a_bugfix(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-fix")
    add_prompt(conn, sid, "fix the tests")
    add_event(conn, sid, *tool("pytest -q", ok=False, error="Exit code 1\nFAILED test_a.py::test_x"), key="f1")
    add_event(conn, sid, "tool", {"tool_name": "Edit", "tool_input": {
        "file_path": "/home/dev/proj/a.py", "old_string": "return 1", "new_string": "return 2"},
        "tool_response": {"structuredPatch": [{"lines": ["-    return 1", "+    return 2"]}]}}, "f2")
    add_event(conn, sid, *tool("pytest -q", stdout="3 passed"), key="f3")
    add_event(conn, sid, "summarize", {"last_assistant_message": "fixed", "prompt_number": 1}, "f4")
    run(Pipeline(conn, make_settings(), OfflineProvider()))
    [(kind, title)] = conn.execute("SELECT type, title FROM observations").fetchall()
    assert kind == "bugfix" and "a.py" in title and "tests passed" in title
    assert conn.execute("SELECT next_steps FROM summaries").fetchone()[0] == "none recorded"


def test_offline_unresolved_failure_is_recorded(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-fail")
    add_event(conn, sid, *tool("make build", ok=False, error="Exit code 2\nmissing header foo.h"), key="e1")
    run(Pipeline(conn, make_settings(), OfflineProvider()))
    [(kind, title)] = conn.execute("SELECT type, title FROM observations").fetchall()
    assert kind == "discovery" and "make build" in title and "fails" in title


def test_prompts_start_with_header_and_say_what_not_to_record(data_dir):
    conn = connect(data_dir)
    load_session_edit(conn)
    fake = FakeProvider(script={})
    run(Pipeline(conn, make_settings(), fake))
    assert fake.calls and all(prompt.startswith(PROMPT_HEADER + "\n") for _, prompt in fake.calls)
    first = fake.calls[0][1]
    assert "Project: /home/dev/proj" in first and "The user's request: edit hello.txt" in first
    assert time.strftime("%Y-%m-%d", time.gmtime()) in first and "Do NOT record" in first
    assert 'file="hello.txt"' in first and "<summary>" in first
    assert fake.opened[0].system_prompt.startswith("You are the memory observer")


def test_recap_when_a_session_reopens_after_a_restart(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-recap")
    add_prompt(conn, sid, "first")
    add_event(conn, sid, *tool("make test", stdout="ok"), key="a1")
    run(Pipeline(conn, make_settings(), FakeProvider(script={})))
    add_prompt(conn, sid, "second", number=2)
    fake = FakeProvider(script={})  # a new worker process: no conversation open yet
    run(Pipeline(conn, make_settings(), fake))
    [info] = fake.opened
    assert "make test" in info.recap
    assert "conversation was restarted" in fake.calls[0][1] and "make test" in fake.calls[0][1]


def test_rewording_fake_never_repeats_itself(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-reword")
    add_event(conn, sid, *tool("make test"), key="w1")
    fake = FakeProvider(script={})
    kind, payload = tool("make test")
    prompt = turn_request([PendingEvent(1, sid, kind, 1, payload)], root="/p")
    info = SessionInfo(content_session_id="x", project="/p")

    async def twice():
        session = await fake.open(info)
        return [(await session.send(prompt)).text for _ in range(2)]

    first, second = asyncio.run(twice())
    assert first != second and "make test" in first and "make test" in second


def test_batches_keep_session_order_and_bounds(data_dir):
    conn = connect(data_dir)
    a, b = add_session(conn, "s-a"), add_session(conn, "s-b")
    for n in range(5):
        add_event(conn, a, *tool(f"echo a{n} && make"), key=f"a{n}")
        add_event(conn, b, *tool(f"echo b{n} && make"), key=f"b{n}")
    add_prompt(conn, a, "next turn", number=2)
    fake = FakeProvider(script={})
    run(Pipeline(conn, make_settings(batch_max_events=2), fake))
    seen = {}
    for content_id, prompt in fake.calls:
        seen.setdefault(content_id, []).append([int(x) for x in __import__("re").findall(r'<event id="(\d+)"', prompt)])
    for batches in seen.values():
        flat = [i for batch in batches for i in batch]
        assert flat == sorted(flat) and all(len(batch) <= 2 for batch in batches)
    assert [len(b) for b in seen["s-a"]] == [2, 2, 1, 1]  # the new prompt starts its own batch
    assert statuses(conn) == {"done": 11}


def test_batch_max_chars_bounds_a_batch(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-chars")
    for n in range(4):
        add_event(conn, sid, *tool("make", stdout="x" * 3000), key=f"c{n}")
    batch = queue.claim_batch(conn, lease_seconds=60, max_events=20, max_chars=7000, max_attempts=3)
    assert len(batch.events) == 2


def test_thousand_malformed_replies_end_visibly_failed(data_dir):
    conn = connect(data_dir)
    count = 500
    for s in range(25):
        sid = add_session(conn, f"s-bad-{s}")
        for n in range(count // 25):
            add_event(conn, sid, *tool(f"make {n}"), key=f"bad-{s}-{n}")
    fake = FakeProvider(script={"default": "malformed"})
    pipeline = Pipeline(conn, make_settings(batch_max_events=2, max_attempts=4), fake)
    run(pipeline)
    assert len(fake.calls) >= 1000
    assert statuses(conn) == {"failed": count}
    rows = conn.execute("SELECT attempts, last_error FROM pending_events").fetchall()
    assert all(attempts == 4 and "MalformedReply" in error for attempts, error in rows)
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 0
    assert queue.retry(conn) == count and statuses(conn) == {"pending": count}


def test_exponential_backoff_then_failed(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-backoff")
    add_event(conn, sid, *tool("make"), key="k1")
    fake = FakeProvider(script={"steps": [{"error": "provider", "message": "boom"}] * 5})
    pipeline = Pipeline(conn, make_settings(retry_backoff_seconds=30.0), fake)
    before = time.time()
    assert asyncio.run(pipeline.step())
    status, attempts, error, next_at = conn.execute(
        "SELECT status, attempts, last_error, next_attempt_at FROM pending_events").fetchone()
    assert (status, attempts) == ("pending", 1) and "boom" in error
    assert iso(before + 29) <= next_at <= iso(time.time() + 31)
    assert not asyncio.run(pipeline.step())  # not due yet
    conn.execute("UPDATE pending_events SET next_attempt_at = NULL")
    asyncio.run(pipeline.step())
    next_at = conn.execute("SELECT next_attempt_at FROM pending_events").fetchone()[0]
    assert next_at >= iso(time.time() + 59)  # doubled
    conn.execute("UPDATE pending_events SET next_attempt_at = NULL")
    asyncio.run(pipeline.step())
    assert conn.execute("SELECT status, attempts FROM pending_events").fetchone() == ("failed", 3)


def test_rate_limit_backs_off_without_burning_attempts(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-rate")
    add_event(conn, sid, *tool("make"), key="r1")
    fake = FakeProvider(script={"steps": [{"error": "rate", "retry_after": 0}] * 4})
    pipeline = Pipeline(conn, make_settings(), fake)
    run(pipeline)
    assert conn.execute("SELECT status, attempts FROM pending_events").fetchone() == ("done", 1)
    assert len(fake.calls) == 5


@pytest.mark.parametrize("kind", ["auth", "quota"])
def test_auth_and_quota_errors_pause_the_queue(data_dir, kind):
    conn = connect(data_dir)
    sid = add_session(conn, "s-auth")
    add_event(conn, sid, *tool("make"), key="a1")
    fake = FakeProvider(script={"steps": [{"error": kind, "message": "no credentials"}],
                                "health": {"ok": False, "reason": "not logged in"}})
    pipeline = Pipeline(conn, make_settings(), fake)
    assert asyncio.run(pipeline.step())
    assert not asyncio.run(pipeline.step())  # paused: nothing more is claimed
    status, attempts, error = conn.execute("SELECT status, attempts, last_error FROM pending_events").fetchone()
    assert (status, attempts) == ("pending", 0) and "no credentials" in error
    health = asyncio.run(pipeline.health())
    assert health["ok"] is False and "no credentials" in health["reason"]
    fake.script["health"] = {"ok": True}
    pipeline.paused_until = 0
    run(pipeline)
    assert statuses(conn) == {"done": 1} and asyncio.run(pipeline.health())["ok"]


def test_fatal_provider_error_fails_at_once(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-fatal")
    add_event(conn, sid, *tool("make"), key="x1")
    run(Pipeline(conn, make_settings(), FakeProvider(script={"steps": [{"error": "fatal", "message": "too long"}]})))
    assert conn.execute("SELECT status, attempts FROM pending_events").fetchone() == ("failed", 1)


def test_timeout_is_a_failed_attempt(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-slow")
    add_event(conn, sid, *tool("make"), key="t1")
    fake = FakeProvider(script={"steps": [{"delay": 5}]})
    pipeline = Pipeline(conn, make_settings(observer_timeout_seconds=0.2, retry_backoff_seconds=60.0), fake)
    asyncio.run(pipeline.step())
    status, error = conn.execute("SELECT status, last_error FROM pending_events").fetchone()
    assert status == "pending" and "no observer reply within" in error


def test_expired_lease_returns_events_and_a_late_result_is_discarded(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-lease")
    add_event(conn, sid, *tool("make"), key="l1")
    stale = queue.claim_batch(conn, lease_seconds=-1, max_events=5, max_chars=10_000, max_attempts=3)
    assert stale is not None
    fake = FakeProvider(script={})
    run(Pipeline(conn, make_settings(), fake))  # reclaims the expired batch and completes it
    assert statuses(conn) == {"done": 1}
    from claude_mem.observer.parser import parse
    from claude_mem.store.results import store_batch
    late = parse("<observation><type>change</type><title>late</title><narrative>n</narrative></observation>")
    assert store_batch(conn, stale, late.observations, late.summary) is None
    assert conn.execute("SELECT COUNT(*) FROM observations WHERE title = 'late'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 1


def test_identical_observations_are_stored_once_per_session(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-dup")
    add_event(conn, sid, *tool("make"), key="d1")
    add_prompt(conn, sid, "again", number=2)
    text = "<observation><type>change</type><title>Same</title><narrative>Same.</narrative></observation>"
    run(Pipeline(conn, make_settings(), FakeProvider(script={"steps": [{"text": text}, {"text": text}]})))
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM observation_sources").fetchone()[0] == 2


def test_idle_sessions_become_interrupted(data_dir):
    conn = connect(data_dir)
    add_session(conn, "old", last_activity="2020-01-01T00:00:00.000Z")
    add_session(conn, "new")
    assert mark_idle_sessions(conn, 24) == ["old"]
    assert dict(conn.execute("SELECT content_session_id, status FROM sessions")) == {
        "old": "interrupted", "new": "active"}


def test_conversations_are_capped_and_never_doubled(data_dir):
    conn = connect(data_dir)
    for s in range(4):
        sid = add_session(conn, f"s-cap-{s}")
        for n in range(3):
            add_event(conn, sid, *tool(f"make {n}"), key=f"cap-{s}-{n}")
    fake = FakeProvider(script={"delay": 0.01})
    pipeline = Pipeline(conn, make_settings(max_observers=2, batch_max_events=1), fake)

    async def go():
        task = asyncio.create_task(pipeline.run())
        for _ in range(400):
            if statuses(conn) == {"done": 12}:
                break
            await asyncio.sleep(0.02)
        await pipeline.stop(5.0, task)

    asyncio.run(go())
    assert statuses(conn) == {"done": 12}
    assert fake.max_open <= 2 and not fake.open_sessions


def test_a_poisonous_event_takes_few_neighbours_down(data_dir):
    """Every failed attempt halves the next batch, so the event that breaks every reply ends up
    failing nearly alone while the rest of its turn is observed."""
    conn = connect(data_dir)
    sid = add_session(conn, "s-poison")
    for n in range(8):
        add_event(conn, sid, *tool("make poison-target" if n == 2 else f"make step-{n}"), key=f"p{n}")
    fake = FakeProvider(script={"poison": "poison-target"})
    run(Pipeline(conn, make_settings(batch_max_events=8, max_attempts=4), fake))
    failed = conn.execute("SELECT event_key FROM pending_events WHERE status = 'failed'").fetchall()
    assert failed == [("p2",)]
    assert statuses(conn) == {"done": 7, "failed": 1}
    sizes = [prompt.count("make ") for _, prompt in fake.calls]
    assert sizes[:3] == [8, 4, 2]  # halved after each failure of the head event


def test_the_first_attempt_uses_the_whole_batch(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-whole")
    for n in range(6):
        add_event(conn, sid, *tool(f"make step-{n}"), key=f"w{n}")
    fake = FakeProvider()
    run(Pipeline(conn, make_settings(batch_max_events=8), fake))
    assert len(fake.calls) == 1 and statuses(conn) == {"done": 6}


OBSERVATION_ONLY = ("<observation><type>change</type><title>Edited a.py</title>"
                    "<narrative>a.py now returns 2.</narrative></observation>")


def turn_with_summary(conn, content_id):
    sid = add_session(conn, content_id)
    add_prompt(conn, sid, "change a.py")
    add_event(conn, sid, *tool("make test", stdout="ok"), key=f"{content_id}-t")
    add_event(conn, sid, "summarize", {"last_assistant_message": "done", "prompt_number": 1}, f"{content_id}-s")
    return sid


def test_a_reply_without_its_summary_is_asked_for_the_summary_alone(data_dir):
    """Regression: a turn whose reply had no <summary> used to be marked done without one."""
    conn = connect(data_dir)
    turn_with_summary(conn, "s-nosum")
    fake = FakeProvider(script={"steps": [{"text": OBSERVATION_ONLY}]})  # then: reword (with a summary)
    run(Pipeline(conn, make_settings(), fake))
    assert statuses(conn) == {"done": 3}
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 1
    request, notes = conn.execute("SELECT request, notes FROM summaries").fetchone()
    assert request == "change a.py" and notes == "done"
    first, follow_up = fake.requests
    assert not first.summary_only and follow_up.summary_only and follow_up.events == ()
    assert follow_up.text.startswith(PROMPT_HEADER + "\n") and "<summary>" in follow_up.text
    assert len(follow_up.text) < 1200  # the summary request alone, not the batch again


def test_a_summary_that_never_comes_fails_its_event_visibly(data_dir):
    conn = connect(data_dir)
    turn_with_summary(conn, "s-nosum-ever")
    fake = FakeProvider(script={"steps": [{"text": OBSERVATION_ONLY}, {"text": "<skip/>"}, {"text": "no idea"}]})
    run(Pipeline(conn, make_settings(max_attempts=3), fake))
    assert len(fake.calls) == 3  # the batch, then two follow-ups: max_attempts requests in all
    rows = dict(conn.execute("SELECT kind, status FROM pending_events").fetchall())
    assert rows == {"prompt": "done", "tool": "done", "summarize": "failed"}
    error = conn.execute("SELECT last_error FROM pending_events WHERE kind = 'summarize'").fetchone()[0]
    assert "no <summary>" in error and "3 request(s)" in error
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 0
    assert queue.recent_failures(conn)[0]["kind"] == "summarize"
    # retried later, the summarize event alone is a batch, and this time the summary comes
    assert queue.retry(conn) == 1
    run(Pipeline(conn, make_settings(), FakeProvider(script={})))
    assert statuses(conn) == {"done": 3}
    assert conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 1


def test_standing_instructions_are_sent_once_per_conversation(data_dir):
    """A provider that takes a system prompt gets the instructions there and never in a user turn."""
    conn = connect(data_dir)
    load_session_edit(conn)
    fake = FakeProvider(script={"system_prompt": True})
    run(Pipeline(conn, make_settings(), fake))
    [info] = fake.opened
    for text in ("You are the memory observer", "Do NOT record", "<observation>", "Project: /home/dev/proj",
                 "The user's request: edit hello.txt"):
        assert info.system_prompt.count(text) == 1, text
    assert all("Do NOT record" not in prompt and "<title>" not in prompt for _, prompt in fake.calls)
    first = fake.calls[0][1]
    assert first.startswith(PROMPT_HEADER + "\n\nNew events in the session") and 'file="hello.txt"' in first


def test_without_a_system_prompt_the_first_turn_opens_with_it(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "s-open")
    add_prompt(conn, sid, "first")
    add_event(conn, sid, *tool("make test"), key="o1")
    add_prompt(conn, sid, "second", number=2)
    fake = FakeProvider(script={})
    run(Pipeline(conn, make_settings(), fake))
    first, second = (prompt for _, prompt in fake.calls)
    assert first.startswith(PROMPT_HEADER + "\n\n" + fake.opened[0].system_prompt + "\n\n")
    assert first.count("Do NOT record") == 1 and "Do NOT record" not in second


def test_the_offline_and_fake_providers_answer_from_the_request_data(data_dir):
    """Not from the prompt's prose: a request whose text names nothing still gets its events observed."""
    kind, payload = tool("make test")
    real = turn_request([PendingEvent(7, 1, kind, 1, payload)], root="/p")
    bare = dataclasses.replace(real, text=PROMPT_HEADER)
    info = SessionInfo(content_session_id="x", project="/p")

    async def ask(provider):
        session = await provider.open(info)
        return (await session.send(bare)).text

    assert "make test" in asyncio.run(ask(FakeProvider(script={})))
    assert "make test" in asyncio.run(ask(OfflineProvider()))


def test_the_observer_service_names_the_provider_it_runs(data_dir):
    from claude_mem.observer.service import ObserverService
    from claude_mem.worker.context import WorkerContext

    async def start(provider, settings):
        ctx = WorkerContext(settings=settings, data_dir=str(data_dir))
        service = ObserverService(provider)
        await service.start(ctx)
        await service.stop()
        return ctx.provider_name

    assert asyncio.run(start(FakeProvider(script={}), make_settings())) == "fake"
    assert asyncio.run(start(None, make_settings(provider="offline"))) == "offline"
