"""The worker's second redaction pass (issue 24): what it catches in rows an older hook stored (or the
observer echoed) is redacted in the store too, counted as "secrets caught late", and shown in
`status`, `/health` and `doctor`. Secrets are assembled at run time: the repository holds none."""

import asyncio
import json
import os
import random
import string
import time

from click.testing import CliRunner
from starlette.testclient import TestClient

from claude_mem import settings as settings_module
from claude_mem.capture import payload as capture_payload
from claude_mem.cli import cli
from claude_mem.cli.checks import INFO, WARNING, _caught_late_checks
from claude_mem.domain import iso
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.anthropic import AnthropicProvider
from claude_mem.store import capture, caught_late, db, queue
from claude_mem.worker.app import create_app
from fakes.anthropic_api import FakeAnthropic
from fakes.observer_provider import FakeProvider
from hook_support import fixture_files, load
from observer_support import connect, drain
from test_worker_app import BASE, make_ctx

KEY = "sk-test-late-key"
ALNUM = string.ascii_letters + string.digits
PROJECT = "/home/dev/proj"


def github_token() -> str:
    return "ghp_" + "".join(random.SystemRandom().choices(ALNUM, k=36))


def store_as_an_old_hook(conn, session: str, kind: str, payload: dict, key: str) -> None:
    """One capture record written as a hook with older rules wrote it: the payload unredacted."""
    record = {"kind": kind, "content_session_id": session, "project": PROJECT, "cwd": PROJECT,
              "captured_at": iso(), "event_key": key, "private": False, "payload": payload}
    with db.transaction(conn):
        assert capture.apply_record(conn, record)


def store_as_this_hook(conn, hook: str, payload: dict) -> None:
    """One payload through this version's capture (redacted with today's rules)."""
    record = capture_payload.build_record(hook, payload, PROJECT, 20_000)
    with db.transaction(conn):
        capture.apply_record(conn, record)


def settings(**overrides):
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "max_attempts": 3}, **overrides)
    return values


def caught(data_dir) -> dict:
    conn = connect(data_dir)
    try:
        return caught_late.report(conn)
    finally:
        conn.close()


def status_json() -> dict:
    result = CliRunner().invoke(cli, ["status", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def health(data_dir) -> dict:
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as client:
        return client.get("/health").json()


def files_of(data_dir) -> bytes:
    """Every byte of the database and its WAL, after a checkpoint that empties the WAL."""
    conn = connect(data_dir)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    path = db.db_path(str(data_dir))
    return b"".join(open(path + suffix, "rb").read() for suffix in ("", "-wal") if os.path.exists(path + suffix))


def old_session(conn, tokens: list[str]) -> dict[str, int]:
    """A turn an old hook stored: a prompt, a Bash output, a clean Read, and the assistant's last message,
    three of them holding a token; returns the rows' ids by name."""
    session = "s-old-hook"
    store_as_an_old_hook(conn, session, "prompt", {"prompt": f"deploy it, the token is {tokens[0]}"}, "p1")
    store_as_an_old_hook(conn, session, "tool", {
        "tool_name": "Bash", "tool_input": {"command": "cat .env", "description": "Show the env"},
        "tool_response": {"stdout": f"export GITHUB_TOKEN={tokens[1]}\nexport DEBUG=1", "stderr": "",
                          "interrupted": False}, "is_interrupt": False, "tool_use_id": "t1", "cwd": PROJECT}, "t1")
    store_as_an_old_hook(conn, session, "tool", {
        "tool_name": "Read", "tool_input": {"file_path": f"{PROJECT}/app.py"},
        "tool_response": {"type": "text", "file": {"filePath": f"{PROJECT}/app.py", "content": "print('hi')"}},
        "is_interrupt": False, "tool_use_id": "t2", "cwd": PROJECT}, "t2")
    store_as_an_old_hook(conn, session, "summarize", {"last_assistant_message": f"Pushed with {tokens[2]}."}, "s1")
    ids = dict(conn.execute("SELECT event_key, id FROM pending_events").fetchall())
    ids["prompt row"] = conn.execute("SELECT id FROM prompts").fetchone()[0]
    return ids


def test_what_the_second_pass_catches_is_redacted_everywhere_counted_and_shown(data_dir):
    tokens = [github_token() for _ in range(3)]
    conn = connect(data_dir)
    ids = old_session(conn, tokens)
    with FakeAnthropic(api_key=KEY) as fake:
        values = settings(provider="anthropic", anthropic_api_key=KEY, anthropic_base_url=fake.url,
                          observer_timeout_seconds=10)
        pipeline = Pipeline(conn, values, AnthropicProvider(values))
        assert asyncio.run(drain(pipeline)) == 1
        pipeline.close()
        requests = json.dumps([request.body for request in fake.posts()])
    assert "[REDACTED:" in requests and "print('hi')" in requests  # the observer saw the turn, redacted
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 1
    assert conn.execute("SELECT status FROM summaries JOIN pending_events e ON e.id = event_id").fetchone() == ("done",)
    stored = dict(conn.execute("SELECT id, payload FROM pending_events").fetchall())
    assert all("[REDACTED:" in stored[ids[key]] for key in ("p1", "t1", "s1"))
    assert "REDACTED" not in stored[ids["t2"]]
    assert "[REDACTED:" in conn.execute("SELECT text FROM prompts").fetchone()[0]
    # the prompt's full-text index followed its row, and holds none of the token's words
    assert conn.execute("SELECT rowid FROM prompts_fts WHERE prompts_fts MATCH 'deploy'").fetchall() == [
        (ids["prompt row"],)]
    conn.execute("INSERT INTO prompts_fts (prompts_fts) VALUES ('integrity-check')")
    conn.close()

    blob = files_of(data_dir)
    for token in tokens:
        assert token not in requests
        assert token.encode() not in blob and token[4:].lower().encode() not in blob

    expected = {("event", ids["p1"]), ("event", ids["t1"]), ("event", ids["s1"]), ("prompt", ids["prompt row"])}
    report = caught(data_dir)
    assert report["secrets_caught_late"] == len(expected) == 4  # the clean Read is not counted
    assert {(c["row"], c["id"]) for c in report["latest"]} == expected
    assert {c["detail"] for c in report["latest"]} == {"prompt", "tool Bash", "summarize", "prompt 1"}
    assert not any(token in json.dumps(report) for token in tokens)

    assert status_json()["privacy"] == report
    human = CliRunner().invoke(cli, ["status"], env={"COLUMNS": "200"}).output
    assert "secrets caught late: 4" in human
    assert health(data_dir)["privacy"] == report


def test_the_count_survives_a_restart_and_a_clean_batch_adds_nothing(data_dir):
    conn = connect(data_dir)
    old_session(conn, [github_token() for _ in range(3)])
    asyncio.run(drain(Pipeline(conn, settings(), FakeProvider(script={}))))
    conn.close()
    assert caught(data_dir)["secrets_caught_late"] == 4
    conn = connect(data_dir)  # a new worker
    store_as_an_old_hook(conn, "s-old-hook", "prompt", {"prompt": "now write the tests"}, "p2")
    store_as_an_old_hook(conn, "s-old-hook", "summarize", {"last_assistant_message": "Tests written."}, "s2")
    assert asyncio.run(drain(Pipeline(conn, settings(), FakeProvider(script={})))) == 1
    conn.close()
    assert caught(data_dir)["secrets_caught_late"] == 4
    assert status_json()["privacy"]["secrets_caught_late"] == 4


def test_normal_sessions_are_never_counted(data_dir):
    session = load("session-edit/01-SessionStart.json")
    conn = connect(data_dir)
    for name in fixture_files("session-edit"):
        payload = {**load(name), "session_id": session["session_id"]}
        hook = next(hook for hook, events in capture_payload.HOOK_EVENTS.items() if payload["hook_event_name"] in events)
        store_as_this_hook(conn, hook, payload)
    assert asyncio.run(drain(Pipeline(conn, settings(), FakeProvider(script={})))) >= 1
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 1
    conn.close()
    assert caught(data_dir) == caught_late.nothing_caught()
    assert status_json()["privacy"] == {"secrets_caught_late": 0, "latest": []}
    assert "secrets caught late" not in CliRunner().invoke(cli, ["status"]).output
    assert health(data_dir)["privacy"]["secrets_caught_late"] == 0


def test_an_observer_that_echoes_a_secret_is_cleaned_and_counted(data_dir):
    token = github_token()
    reply = ("<observation><type>discovery</type><title>Found the deploy token</title>"
             f"<narrative>The token {token} deploys the app.</narrative><facts><fact>token: {token}</fact></facts>"
             "</observation>"
             f"<summary><request>deploy</request><completed>Deployed with {token}</completed></summary>")
    conn = connect(data_dir)
    store_as_an_old_hook(conn, "s-echo", "prompt", {"prompt": "deploy the app"}, "p1")
    store_as_an_old_hook(conn, "s-echo", "summarize", {"last_assistant_message": "Deployed."}, "s1")
    assert asyncio.run(drain(Pipeline(conn, settings(), FakeProvider(script={"steps": [{"text": reply}]})))) == 1
    observation = conn.execute("SELECT id, narrative, facts FROM observations").fetchone()
    summary = conn.execute("SELECT id, completed FROM summaries").fetchone()
    conn.close()
    assert "[REDACTED:" in observation[1] and "[REDACTED:" in observation[2] and "[REDACTED:" in summary[1]
    assert token.encode() not in files_of(data_dir)
    report = caught(data_dir)
    assert report["secrets_caught_late"] == 2
    assert [(c["row"], c["id"], c["detail"]) for c in report["latest"]] == [  # newest first
        ("summary", summary[0], "turn 1"), ("observation", observation[0], "discovery")]


def test_a_caught_prompt_goes_to_the_team_again_and_gets_a_new_vector(data_dir):
    conn = connect(data_dir)
    store_as_an_old_hook(conn, "s-team", "prompt", {"prompt": f"use {github_token()}"}, "p1")
    prompt_id = conn.execute("SELECT id FROM prompts").fetchone()[0]
    conn.execute("UPDATE prompts SET team_rev = 7 WHERE id = ?", (prompt_id,))
    conn.execute("INSERT INTO vectors (kind, row_id, model, scale, vector) VALUES ('prompt', ?, 'm', 1, x'00')",
                 (prompt_id,))
    batch = queue.claim_batch(conn, lease_seconds=60, max_events=20, max_chars=30_000, max_attempts=3)
    cleaned = caught_late.clean_batch(conn, batch)
    assert "[REDACTED:" in cleaned.events[0].payload["prompt"] and batch.ids == cleaned.ids
    assert conn.execute("SELECT team_rev FROM prompts").fetchone() == (None,)
    assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone() == (0,)
    assert conn.execute("SELECT kind, row_id FROM vector_queue").fetchall() == [("prompt", prompt_id)]  # embedded anew
    assert caught_late.clean_batch(conn, cleaned) is cleaned  # nothing left to catch, nothing counted twice
    assert caught_late.report(conn)["secrets_caught_late"] == 2


def test_the_count_keeps_growing_while_only_the_latest_catches_are_kept(data_dir):
    conn = connect(data_dir)
    for n in range(caught_late.KEPT + 5):
        with db.transaction(conn):
            caught_late.record(conn, [caught_late.Catch("event", n, "tool Bash")])
    report = caught_late.report(conn)
    assert report["secrets_caught_late"] == caught_late.KEPT + 5
    assert [c["id"] for c in report["latest"]] == list(range(caught_late.KEPT + 4, 4, -1))


def test_doctor_warns_while_the_latest_catch_is_recent():
    assert _caught_late_checks(caught_late.nothing_caught()) == []
    latest = {"at": iso(), "row": "event", "id": 3, "detail": "tool Bash"}
    [recent] = _caught_late_checks({"secrets_caught_late": 2, "latest": [latest]})
    assert recent.status == WARNING and "2 row(s)" in recent.detail and recent.fix
    old = {**latest, "at": iso(time.time() - 30 * 86400)}
    [past] = _caught_late_checks({"secrets_caught_late": 2, "latest": [old]})
    assert past.status == INFO and not past.fix
