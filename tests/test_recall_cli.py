"""The recall commands on the command line: tables, --json, clear errors (exit 1, no traceback)."""

import json
import os

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.hooks import runner as hook_runner
from claude_mem.store import db
from recall_seed import add_observation, add_session, seed_project

PROJECT = "/home/dev/proj"


@pytest.fixture
def runner(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", PROJECT)  # project.identity() honours it, as in a hook
    monkeypatch.setenv("COLUMNS", "160")
    return CliRunner()


@pytest.fixture
def conn(data_dir):
    connection = db.connect(db.db_path(str(data_dir)))
    yield connection
    connection.close()


def run(runner: CliRunner, *args: str, input: str | None = None, code: int = 0):
    result = runner.invoke(cli, list(args), input=input)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result


def test_remember_then_context_search_show(runner, conn, tmp_path):
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    stored = json.loads(run(runner, "remember", "Deploys need the VPN. Without it the upload hangs.", "--type",
                            "decision", "--project", str(project), "--json").stdout)
    assert stored["title"] == "Deploys need the VPN." and stored["created"] and stored["session_id"] is None
    again = run(runner, "remember", "Deploys need the VPN. Without it the upload hangs.", "--type", "decision",
                "--project", str(project))
    assert f"Already remembered #{stored['id']}" in again.stdout
    text = run(runner, "context", "--project", str(project)).stdout
    assert f"#{stored['id']} " in text and "decision Deploys need the VPN." in text
    found = json.loads(run(runner, "search", "vpn", "--json").stdout)
    assert [item["id"] for item in found["items"]] == [stored["id"]] and found["total"] == 1
    table = run(runner, "search", "upload", "--project", "repo").stdout
    assert f"#{stored['id']}" in table and "1–1 of 1" in table
    shown = run(runner, "show", f"#{stored['id']}").stdout
    assert "Without it the upload hangs." in shown
    assert conn.execute("SELECT fetch_count FROM observations WHERE id = ?", (stored["id"],)).fetchone()[0] == 1
    run(runner, "show", str(stored["id"]), "--json")
    assert conn.execute("SELECT fetch_count FROM observations WHERE id = ?", (stored["id"],)).fetchone()[0] == 2


def session_start_hook(capsysbinary: pytest.CaptureFixture[bytes], session: str = "s") -> dict:
    """What the real session-start hook prints for a session starting in PROJECT."""
    capsysbinary.readouterr()
    payload = {"session_id": session, "cwd": PROJECT, "source": "startup", "hook_event_name": "SessionStart"}
    hook_runner.handle("session-start", json.dumps(payload).encode(), {"CLAUDE_PROJECT_DIR": PROJECT})
    return json.loads(capsysbinary.readouterr().out)


def test_context_prints_what_the_hook_injects(runner, conn, data_dir, capsysbinary):
    seed_project(conn, PROJECT, 20)
    printed = run(runner, "context").stdout.rstrip("\n")
    hook = session_start_hook(capsysbinary)
    injected = hook["hookSpecificOutput"]["additionalContext"]
    strip_header = lambda text: text.split("\n", 1)[1]  # noqa: E731  (the header carries the minute)
    assert strip_header(printed) == strip_header(injected)
    as_json = json.loads(run(runner, "context", "--json").stdout)
    assert as_json["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    resumed = run(runner, "context", "--source", "resume", "--session", "s").stdout
    assert "Nothing new was stored" in resumed


def test_context_json_of_an_empty_project_is_the_hooks_output(runner, conn, capsysbinary):
    seed_project(conn, "/home/dev/elsewhere", 3)  # memory of another project only
    before = json.loads(run(runner, "context", "--json").stdout)
    hook = session_start_hook(capsysbinary)
    after = json.loads(run(runner, "context", "--json").stdout)
    assert before == hook == after
    assert hook["hookSpecificOutput"]["additionalContext"].startswith("claude-mem: no memory stored yet for project proj.")


def test_timeline_table_and_json(runner, conn):
    ids = seed_project(conn, PROJECT, 8)
    out = run(runner, "timeline", str(ids[4]), "--before", "1", "--after", "1").stdout
    assert f"#{ids[3]}" in out and f"#{ids[5]}" in out and f"#{ids[6]}" not in out and "▶" in out
    data = json.loads(run(runner, "timeline", str(ids[4]), "--json").stdout)
    assert data["anchor"]["id"] == ids[4]


@pytest.mark.parametrize("args, message", [
    (["search", "  "], "empty query"),
    (["search", "x", "--since", "last tuesday"], "not a date or time"),
    (["search", "x", "--project", "nowhere"], "unknown project"),
    (["show", "12345"], "unknown id(s): #12345"),
    (["show", "abc"], "not an id"),
    (["timeline", "777"], "no observation #777"),
    (["timeline", "2026-13-45"], "not a date or time"),
    (["timeline", "99999-01-01"], "not a date or time"),
    (["remember", "   "], "nothing to remember"),
    (["forget", "4242", "--yes"], "unknown observation id(s): #4242"),
    (["forget", "--session", "nope", "--yes"], "unknown session"),
    (["forget", "--yes"], "say what to forget"),
])
def test_bad_input_exits_1_with_one_line(runner, conn, args, message):
    result = run(runner, *args, code=1)
    assert message in result.output
    assert result.output.count("\n") <= 2


def test_forget_asks_unless_yes(runner, conn):
    session = add_session(conn, "s-forget", PROJECT)
    keep = add_observation(conn, PROJECT, "Keep this one about the parser", session_id=session)
    doomed = add_observation(conn, PROJECT, "Forget this one about the parser", session_id=session)
    refused = run(runner, "forget", str(doomed), input="n\n", code=1)
    assert "Forget 1 observation(s)" in refused.output
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 2
    result = run(runner, "forget", str(doomed), "--json", input="y\n")
    report = json.loads(result.stdout[result.stdout.index("{"):])
    assert report["counts"]["observations"] == 1
    assert [row[0] for row in conn.execute("SELECT id FROM observations")] == [keep]
    assert run(runner, "search", "parser", "--json").stdout.count('"ref"') == 1


def test_forget_project_by_display_name(runner, conn):
    seed_project(conn, PROJECT, 5)
    seed_project(conn, "/home/dev/other", 3)
    result = run(runner, "forget", "--project", "proj", "--yes")
    assert "Forgot project /home/dev/proj" in result.stdout
    assert conn.execute("SELECT DISTINCT project FROM observations").fetchall() == [("/home/dev/other",)]
    assert conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1


def test_every_recall_command_has_help(runner):
    for command in ("search", "show", "timeline", "context", "remember", "forget"):
        out = run(runner, command, "--help").stdout
        assert "Usage: " in out and len(out.splitlines()) > 5
    assert os.environ["CLAUDE_PROJECT_DIR"] == PROJECT
