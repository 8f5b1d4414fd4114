"""Observer token budgets (issue 30): a spent budget hands batches to the offline observer, the ledger
(`observer_spend`) records every request, and `/health`, `status` and `/api/stats` say why.

The pipeline runs against a real SQLite store with a clock the test sets (so the UTC day can turn);
the worker test runs the real worker process with the `anthropic` observer against the loopback fake
Messages API.
"""

import asyncio
import calendar
import json
import logging
import os
import time
import urllib.request

import pytest

from claude_mem.observer import budget
from claude_mem.observer.pipeline import Pipeline
from claude_mem.recall import usage
from claude_mem.store import queue, results, spend
from fakes.anthropic_api import FakeAnthropic
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_prompt, add_session, connect, drain
from test_observer import make_settings, statuses, tool
from test_observer_worker import cli, counts, wait_for, worker_env
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

NOON = calendar.timegm((2026, 11, 26, 12, 0, 0))
DAY = "2026-11-26"
NEXT_DAY = "2026-11-27"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ledger(conn):
    return conn.execute("SELECT day, provider, session_id, requests, input_tokens, output_tokens, over_budget"
                        " FROM observer_spend ORDER BY day, provider, session_id").fetchall()


def add_work(conn, content_id, steps, key):
    sid = add_session(conn, content_id)
    add_prompt(conn, sid, f"work on {content_id}")
    for n in range(steps):
        add_event(conn, sid, *tool(f"make {key}{n}"), key=f"{key}-{n}")
    return sid


def budget_logs(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "claude_mem.observer" and "budget" in r.getMessage()]


def test_a_spent_daily_budget_hands_batches_to_offline_until_the_utc_day_turns(data_dir, caplog):
    caplog.set_level(logging.INFO, "claude_mem.observer")
    conn = connect(data_dir)
    sid = add_work(conn, "s-daily", 6, "d")
    fake = FakeProvider(script={})
    clock = Clock(NOON)
    pipeline = Pipeline(conn, make_settings(observer_daily_tokens=50, batch_max_events=2, max_observers=1), fake,
                        clock=clock)
    batches = asyncio.run(drain(pipeline))
    assert batches >= 3 and statuses(conn) == {"done": 7}
    assert len(fake.calls) == 1  # the first batch used the LLM; its reply spent the budget
    rows = ledger(conn)
    assert [r[:4] for r in rows] == [(DAY, "fake", sid, 1), (DAY, "offline", sid, batches - 1)]
    assert rows[0][4] > 50 and rows[0][5] > 0 and rows[0][6] == 0  # the tokens of the fake's reply
    assert rows[1][4:] == (0, 0, batches - 1)  # every offline batch counted as handled over budget
    assert conn.execute("SELECT observer_provider FROM sessions WHERE id = ?", (sid,)).fetchone()[0] == "offline"
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 2  # capture went on, observed offline
    said = budget_logs(caplog)
    assert len(said) == 1, said  # once per switch, not per batch
    assert "observer_daily_tokens" in said[0] and f"{NEXT_DAY}T00:00:00" in said[0] and "offline" in said[0]
    report = budget.report(conn, pipeline.limits, clock())
    assert report["state"] == budget.OVER_DAILY and report["spent_today"] == rows[0][4] + rows[0][5]
    assert report["resets_at"].startswith(f"{NEXT_DAY}T00:00:00") and report["over_budget_today"] == batches - 1

    clock.now += 86_400  # the UTC day turns: the LLM is back by itself
    add_event(conn, sid, *tool("make again"), key="d-next-day")
    assert asyncio.run(drain(pipeline)) == 1
    assert len(fake.calls) == 2
    assert ledger(conn)[-1][:4] == (NEXT_DAY, "fake", sid, 1)
    assert conn.execute("SELECT observer_provider FROM sessions WHERE id = ?", (sid,)).fetchone()[0] == "fake"
    said = budget_logs(caplog)
    assert len(said) == 2 and "back to the fake observer" in said[1]
    asyncio.run(pipeline.stop())
    pipeline.close()


def test_a_session_budget_limits_that_session_only(data_dir, caplog):
    caplog.set_level(logging.INFO, "claude_mem.observer")
    conn = connect(data_dir)
    greedy = add_work(conn, "s-greedy", 4, "g")
    modest = add_work(conn, "s-modest", 1, "m")
    fake = FakeProvider(script={})
    pipeline = Pipeline(conn, make_settings(observer_session_tokens=50, batch_max_events=2, max_observers=1), fake,
                        clock=Clock(NOON))
    asyncio.run(drain(pipeline))
    assert statuses(conn) == {"done": 7}
    by_session = {(r[1], r[2]): r for r in ledger(conn)}
    assert by_session[("fake", greedy)][3] == 1  # one LLM request, then its budget was spent
    assert by_session[("offline", greedy)][6] >= 1  # the rest observed offline, counted over budget
    assert by_session[("fake", modest)][3] == 1 and ("offline", modest) not in by_session  # its own budget
    said = budget_logs(caplog)
    assert len(said) == 1 and "s-greedy" in said[0] and "observer_session_tokens" in said[0]  # once, not per batch
    report = budget.report(conn, pipeline.limits, NOON)
    assert report["state"] == budget.OVER_SESSION and report["sessions"] == ["s-greedy", "s-modest"]
    assert report["resets_at"] is None and report["daily_tokens"] == 0
    asyncio.run(pipeline.stop())
    pipeline.close()


def test_a_failed_reply_still_counts_its_tokens(data_dir):
    conn = connect(data_dir)
    sid = add_work(conn, "s-malformed", 1, "x")
    fake = FakeProvider(script={"default": "malformed"})
    pipeline = Pipeline(conn, make_settings(max_attempts=1), fake, clock=Clock(NOON))
    asyncio.run(drain(pipeline))
    assert statuses(conn) == {"failed": 2}
    (row,) = ledger(conn)
    assert row[:4] == (DAY, "fake", sid, 1) and row[4] > 0 and row[5] > 0 and row[6] == 0
    pipeline.close()


def test_without_a_budget_nothing_is_offline_and_the_spend_is_per_day_and_provider(data_dir):
    conn = connect(data_dir)
    add_work(conn, "s-free", 3, "f")
    fake = FakeProvider(script={})
    pipeline = Pipeline(conn, make_settings(batch_max_events=2), fake, clock=Clock(NOON))
    assert pipeline.fallback is None
    asyncio.run(drain(pipeline))
    assert {r[1] for r in ledger(conn)} == {"fake"}
    assert spend.spent_on(conn, DAY) == sum(r[4] + r[5] for r in ledger(conn)) > 0
    figures = usage.observer_spend(conn, None, DAY)
    assert figures == [{"day": DAY, "provider": "fake", "requests": len(fake.calls), "input": ledger(conn)[0][4],
                        "output": ledger(conn)[0][5], "over_budget": 0}]
    assert usage.observer_spend(conn, "/elsewhere", DAY) == []
    assert budget.report(conn, pipeline.limits, NOON)["state"] == budget.OK
    pipeline.close()


def health(data_dir):
    with open(os.path.join(data_dir, "worker.json"), encoding="utf-8") as handle:
        port = json.load(handle)["port"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
        return json.load(response)


def test_the_real_worker_observes_offline_once_the_daily_budget_is_spent_and_says_why(data_dir):
    conn = connect(data_dir)
    sids = [add_work(conn, f"s-worker-{n}", 3, f"w{n}") for n in range(2)]
    conn.close()
    with open(os.path.join(data_dir, "settings.json"), "w", encoding="utf-8") as handle:
        json.dump({"observer_session_tokens": "abc"}, handle)  # a bad value in the file: a warning, nothing else
    with FakeAnthropic(api_key="sk-budget-test") as fake:
        env = worker_env(data_dir, CLAUDE_MEM_PROVIDER="anthropic", CLAUDE_MEM_ANTHROPIC_BASE_URL=fake.url,
                         CLAUDE_MEM_ANTHROPIC_API_KEY="sk-budget-test", CLAUDE_MEM_OBSERVER_DAILY_TOKENS="100",
                         CLAUDE_MEM_BATCH_MAX_EVENTS="2", CLAUDE_MEM_MAX_OBSERVERS="1")
        started = cli("worker", "start", env=env)
        assert started.returncode == 0, started.stderr + started.stdout
        try:
            wait_for(lambda: counts(data_dir).keys() == {"done"}, 60, "the queue to drain")
            assert len(fake.posts()) == 1  # the first batch used the LLM; every later one the offline observer
            report = health(data_dir)
            status = json.loads(cli("status", "--json", env=env).stdout)
            text = cli("status", env=env).stdout
        finally:
            assert cli("worker", "stop", env=env).returncode == 0
    conn = connect(data_dir)
    rows = ledger(conn)
    providers = {r[1] for r in rows}
    assert providers == {"anthropic", "offline"} and {r[2] for r in rows} <= set(sids)
    llm = [r for r in rows if r[1] == "anthropic"]
    assert sum(r[3] for r in llm) == 1 and sum(r[4] + r[5] for r in llm) >= 100
    assert sum(r[6] for r in rows if r[1] == "offline") == sum(r[3] for r in rows if r[1] == "offline") >= 2
    spent = report["budget"]
    assert spent["state"] == "over daily budget" and spent["daily_tokens"] == 100 and spent["session_tokens"] == 0
    assert spent["spent_today"] == sum(r[4] + r[5] for r in llm) and "observer_daily_tokens" in spent["reason"]
    assert spent["resets_at"].endswith("T00:00:00.000Z") and spent["over_budget_today"] >= 2
    assert any("observer_session_tokens" in w and "'abc'" in w for w in report["warnings"])
    assert status["observer"]["budget"]["state"] == "over daily budget"
    assert "over daily budget" in text and "observer_daily_tokens" in text
    with open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8") as handle:
        log = handle.read()
    assert log.count("the daily observer budget is spent") == 1  # once per switch, not per batch


@pytest.mark.parametrize("value", ["-5", "abc", "1e30", "true", "2.5"])
def test_a_bad_budget_is_refused_when_set_and_a_warning_when_found(data_dir, value):
    env = worker_env(data_dir, CLAUDE_MEM_PROVIDER="offline")
    refused = cli("settings", "set", "--", "observer_daily_tokens", value, env=env)  # `--`: -5 is no option
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "observer_daily_tokens" in refused.stderr and "whole number from 0 to" in refused.stderr
    assert not os.path.exists(os.path.join(data_dir, "settings.json"))  # nothing written
    env["CLAUDE_MEM_OBSERVER_SESSION_TOKENS"] = value
    assert cli("migrate", env=env).returncode == 0
    status = cli("status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert any(w.startswith("observer_session_tokens = ") and "refused" in w for w in report["warnings"])
    assert report["observer"]["budget"]["session_tokens"] == 0  # the default (unlimited) stands in
    accepted = cli("settings", "set", "observer_daily_tokens", "5000", env=env)
    assert accepted.returncode == 0, accepted.stderr


def test_the_viewer_shows_the_budget_and_the_spend_per_day_and_provider(served, open_page, data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_OBSERVER_DAILY_TOKENS", "1000")
    conn = connect(data_dir)
    sid = add_session(conn, "s-viewer")
    today = budget.utc_day(time.time())
    yesterday = budget.utc_day(time.time() - 86_400)
    spend.add(conn, sid, spend.Spend(yesterday, "claude", 3, 400, 50))
    spend.add(conn, sid, spend.Spend(today, "claude", 2, 900, 150))
    spend.add(conn, sid, spend.Spend(today, "offline", 4, 0, 0, over_budget=4))
    conn.close()
    watched = open_page(served.start().url)
    page = watched.page
    wait_for(lambda: not page.locator("#budget").is_hidden(), 10, "the budget line")
    line = page.text_content("#budget")
    assert line.startswith("Token budget: 1,050 of 1,000 tokens today (UTC)") and "over daily budget" in line
    assert "offline observer until" in line and "warn-text" in page.get_attribute("#budget", "class")
    assert "observer_daily_tokens" in page.get_attribute("#budget", "title")

    page.click("a[data-view=stats]")
    page.wait_for_selector("#stats .spend-table")
    rows = [[cell.strip() for cell in row.locator("td").all_text_contents()]
            for row in page.locator("#stats .spend-table tr").all()[1:]]
    assert rows == [[today, "claude", "2", "900", "150", "0"], [today, "offline", "4", "0", "0", "4"],
                    [yesterday, "claude", "3", "400", "50", "0"]]
    summary = page.locator("#stats .spend .chart-summary").text_content()
    assert summary == "9 requests over 2 days; 4 batches observed offline because a token budget was spent."
    watched.assert_clean()


def test_a_batch_that_lost_its_lease_still_records_what_it_cost(data_dir):
    conn = connect(data_dir)
    sid = add_work(conn, "s-lost", 1, "l")
    batch = queue.claim_batch(conn, lease_seconds=60, max_events=10, max_chars=10_000, max_attempts=3)
    conn.execute("UPDATE pending_events SET lease_until = 'someone else'")  # another claim took it meanwhile
    cost = spend.Spend(DAY, "fake", 1, 700, 80)
    assert results.store_batch(conn, batch, [], None, provider="fake", spend=cost) is None
    assert ledger(conn) == [(DAY, "fake", sid, 1, 700, 80, 0)]
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 0
