"""Event time, not processing time (issue 26): observations and summaries are dated by the events they
came from (a transcript line's own `timestamp`, the hook's time for live capture), and when the
observer stored them is kept apart (`processed_at`). Real transcripts imported by the real CLI, the
real pipeline with the test suite's fake observer, a real SQLite store, the real search and context.
"""

from __future__ import annotations

import asyncio
import calendar
import json
import time

from click.testing import CliRunner

from claude_mem import settings as settings_module
from claude_mem.cli import cli
from claude_mem.domain import iso
from claude_mem.observer.pipeline import Pipeline
from claude_mem.recall import context
from claude_mem.store import context as store_context
from claude_mem.store import migrations
from fakes.observer_provider import FakeProvider
from hook_support import rows
from observer_support import add_event, add_prompt, add_session, connect, drain
from test_import_transcripts import a_session, run_import

SEPTEMBER = calendar.timegm((2026, 9, 10, 12, 0, 0))  # noon UTC: the same day in any local time zone


def make_settings(**overrides: object) -> dict[str, object]:
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "max_attempts": 3}, **overrides)
    return values


def observe(conn) -> FakeProvider:
    provider = FakeProvider(script={})
    pipeline = Pipeline(conn, make_settings(), provider)
    try:
        asyncio.run(drain(pipeline))
    finally:
        pipeline.close()
    return provider


def cli_run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_imported_september_work_is_dated_september(data_dir, tmp_path):
    transcript = a_session("sept", str(tmp_path / "shop"))
    transcript.clock = SEPTEMBER  # restamp its lines as written on 2026-09-10
    for line in transcript.lines:
        if "timestamp" in line:
            transcript.clock += 60
            line["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(transcript.clock)) + ".000Z"
    last_line = max(line["timestamp"] for line in transcript.lines if "timestamp" in line)
    transcript.write(tmp_path / "projects" / "shop")
    assert run_import(str(tmp_path / "projects")).exit_code == 0
    # the import dates the events by the transcript's lines, not by when it ran
    stamps = [stamp for (stamp,) in rows(data_dir, "SELECT created_at FROM pending_events")]
    assert stamps and all(stamp.startswith("2026-09-10T") for stamp in stamps)

    conn = connect(data_dir)
    (project,) = conn.execute("SELECT project FROM sessions WHERE content_session_id = 'sept'").fetchone()
    live = add_session(conn, "live", project=project)  # work captured live today, in the same project
    add_prompt(conn, live, "tune the cache")
    add_event(conn, live, "tool", {"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/test_cache.py"},
                                   "tool_response": {"stdout": "5 passed", "stderr": "", "interrupted": False}}, "l1")
    conn.commit()
    before = iso()
    provider = observe(conn)
    after = iso()

    # the observer is told the events' own day, not today's
    september = [text for session, text in provider.calls if session == "sept"]
    today = [text for session, text in provider.calls if session == "live"]
    assert september and "Date: 2026-09-10" in september[0] and "from 2026-09-10" in september[0]
    assert today and f"Date: {before[:10]}" in today[0] and "2026-09-10" not in "".join(today)

    made = conn.execute("SELECT id, created_at, processed_at FROM observations WHERE session_id != ?",
                        (live,)).fetchall()
    summaries = conn.execute("SELECT created_at, processed_at FROM summaries WHERE session_id != ?",
                             (live,)).fetchall()
    assert made and summaries
    for _id, created, processed in [*made, *((None, *row) for row in summaries)]:
        assert created.startswith("2026-09-10T") and created <= last_line
        assert before <= processed <= after
    (live_id, live_created, live_processed), = conn.execute(
        "SELECT id, created_at, processed_at FROM observations WHERE session_id = ?", (live,)).fetchall()
    assert before[:10] == live_created[:10] and live_created <= live_processed

    # search by date finds September's work and only it
    found = json.loads(cli_run("search", "parser", "--since", "2026-09-01", "--until", "2026-09-30", "--mode", "keyword", "--json"))
    found_ids = {hit["id"] for hit in found["items"] if hit["kind"] == "observation"}
    assert found_ids == {row[0] for row in made}
    assert all(hit["created_at"].startswith("2026-09-10") for hit in found["items"])
    later = json.loads(cli_run("search", "parser", "--since", "2026-10-01", "--mode", "keyword", "--json"))
    assert not [hit for hit in later["items"] if hit["kind"] == "observation"]

    # the session-start index lists them on their own day, before today's live work
    built = context.build(conn, project, values=make_settings(), data_dir=str(data_dir))
    text = built["text"]
    assert "### 2026-09-10" in text
    assert text.index("### 2026-09-10") < text.index(f"#{made[0][0]} ") < text.index(f"#{live_id} ")
    assert built["ids"][0] == live_id  # newest first: today's work, though September's was processed last
    conn.close()


def test_a_backlog_is_dated_when_captured_not_when_processed(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "backlog")
    add_prompt(conn, sid, "fix the flaky upload test")
    add_event(conn, sid, "tool", {"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/test_upload.py"},
                                  "tool_response": {"stdout": "1 failed", "stderr": "", "interrupted": False}}, "b1")
    captured = iso(time.time() - 3600)  # the worker was down for an hour
    conn.execute("UPDATE pending_events SET created_at = ?", (captured,))
    conn.commit()
    injected = iso(time.time() - 1800)  # the session's memory was loaded meanwhile
    before = iso()
    observe(conn)
    (created, processed), = conn.execute("SELECT created_at, processed_at FROM observations").fetchall()
    assert created == captured and processed >= before
    # stored after the injection, though it happened before it: a resumed session is told of it
    assert store_context.observation_total(conn, "/home/dev/proj", injected) == 1
    assert [row[0] for row in store_context.index_rows(conn, "/home/dev/proj", injected, 10)]
    conn.close()


def test_a_manual_note_keeps_now(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a note of the current directory's project
    before = iso()
    cli_run("remember", "The deploy key lives in vault.")
    (created, processed), = rows(data_dir, "SELECT created_at, processed_at FROM observations")
    assert created >= before and processed is None


def test_the_migration_dates_existing_results_by_their_events(data_dir):
    conn = connect(data_dir)
    conn.execute("PRAGMA foreign_keys = ON")
    sid = add_session(conn, "old")
    event = add_event(conn, sid, "summarize", {"prompt_number": 1}, "e1")
    conn.execute("UPDATE pending_events SET created_at = '2026-09-10T12:00:00.000Z'")
    conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash, created_at)"
                 " VALUES (?, 'p', 'change', 't', 'n', 'h', '2026-11-25T08:00:00.000Z')", (sid,))
    conn.execute("INSERT INTO observation_sources (observation_id, event_id) VALUES (1, ?)", (event,))
    conn.execute("INSERT INTO observations (project, type, title, narrative, content_hash, created_at)"
                 " VALUES ('p', 'discovery', 'note', 'n', 'h2', '2026-11-25T09:00:00.000Z')")
    conn.execute("INSERT INTO summaries (session_id, project, event_id, request, created_at)"
                 " VALUES (?, 'p', ?, 'r', '2026-11-25T08:00:01.000Z')", (sid, event))
    conn.commit()
    # as a database made before m013 holds them: undo the migration's columns, then apply it again
    conn.executescript("DROP INDEX observations_project_stored;"  # m015's index of processed_at
                       " ALTER TABLE observations DROP COLUMN processed_at; ALTER TABLE summaries DROP COLUMN"
                       " processed_at; DELETE FROM schema_migrations WHERE name = 'm013_processed_at';")
    migrations.m013_processed_at(conn)
    assert conn.execute("SELECT created_at, processed_at FROM observations ORDER BY id").fetchall() == [
        ("2026-09-10T12:00:00.000Z", "2026-11-25T08:00:00.000Z"), ("2026-11-25T09:00:00.000Z", None)]
    assert conn.execute("SELECT created_at, processed_at FROM summaries").fetchall() == [
        ("2026-09-10T12:00:00.000Z", "2026-11-25T08:00:01.000Z")]
    conn.close()


def test_an_export_carries_processed_at_and_an_older_file_without_it_imports(data_dir, tmp_path):
    conn = connect(data_dir)
    sid = add_session(conn, "exported")
    add_prompt(conn, sid, "fix the flaky upload test")
    add_event(conn, sid, "summarize", {"last_assistant_message": "Fixed.", "prompt_number": 1}, "s1")
    conn.execute("UPDATE pending_events SET created_at = '2026-09-10T12:00:00.000Z'")
    conn.commit()
    observe(conn)
    stored = conn.execute("SELECT uid, created_at, processed_at FROM summaries").fetchall()
    conn.close()
    assert len(stored) == 1
    exported = tmp_path / "a.jsonl"
    cli_run("export", "-o", str(exported))
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    (summary,) = [line for line in lines if line["type"] == "summary"]
    assert (summary["uid"], summary["created_at"], summary["processed_at"]) == stored[0]
    # a file written before the field existed: every record without it
    older = tmp_path / "older.jsonl"
    older.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "processed_at"}) + "\n"
                             for line in lines), encoding="utf-8")
    other = tmp_path / "b"
    other.mkdir()
    result = CliRunner().invoke(cli, ["import", "jsonl", str(older)], env={"CLAUDE_MEM_DATA_DIR": str(other)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert rows(str(other), "SELECT uid, created_at, processed_at FROM summaries") == [
        (stored[0][0], "2026-09-10T12:00:00.000Z", None)]
