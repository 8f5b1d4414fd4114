"""`claude-mem queue` and `claude-mem queue retry`, and the observer section of `status`."""

import json

from click.testing import CliRunner

from claude_mem.cli import cli
from observer_support import add_event, add_session, connect
from test_observer import tool


def seeded(data_dir):
    conn = connect(data_dir)
    sid = add_session(conn, "abcdef123456")
    ids = [add_event(conn, sid, *tool(f"make {n}"), key=f"q{n}") for n in range(3)]
    conn.execute("UPDATE pending_events SET status = 'failed', attempts = 3, last_error = 'MalformedReply: x'"
                 " WHERE id = ?", (ids[0],))
    conn.execute("UPDATE pending_events SET status = 'done' WHERE id = ?", (ids[1],))
    return conn, ids


def test_queue_lists_open_events_with_errors(data_dir):
    seeded(data_dir)
    result = CliRunner().invoke(cli, ["queue"])
    assert result.exit_code == 0, result.output
    assert "1 pending" in result.output and "1 failed" in result.output and "1 done" in result.output
    assert "MalformedReply" in result.output and "abcdef12" in result.output


def test_queue_json_and_status_filter(data_dir):
    _, ids = seeded(data_dir)
    result = CliRunner().invoke(cli, ["queue", "--status", "failed", "--json"])
    data = json.loads(result.output)
    assert [e["id"] for e in data["events"]] == [ids[0]] and data["counts"]["failed"] == 1
    assert data["events"][0]["tool"] == "Bash"
    everything = json.loads(CliRunner().invoke(cli, ["queue", "--status", "all", "--json"]).output)
    assert len(everything["events"]) == 3


def test_queue_on_an_empty_store(data_dir):
    result = CliRunner().invoke(cli, ["queue"])
    assert result.exit_code == 0 and "0 pending" in result.output


def test_retry_by_id_and_all(data_dir):
    conn, ids = seeded(data_dir)
    result = CliRunner().invoke(cli, ["queue", "retry", str(ids[0])])
    assert result.exit_code == 0 and "requeued 1 event" in result.output
    assert conn.execute("SELECT status, attempts FROM pending_events WHERE id = ?", (ids[0],)).fetchone() == ("pending", 0)
    assert "requeued 0 events" in CliRunner().invoke(cli, ["queue", "retry", "--all"]).output
    assert CliRunner().invoke(cli, ["queue", "retry", str(ids[1])]).output.startswith("requeued 0")  # done stays done


def test_retry_needs_ids_or_all(data_dir):
    for args in (["queue", "retry"], ["queue", "retry", "1", "--all"], ["queue", "retry", "x"]):
        assert CliRunner().invoke(cli, args).exit_code == 2


def test_status_shows_the_observer(data_dir):
    seeded(data_dir)
    report = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)["observer"]
    assert report["queue"] == {"pending": 1, "claimed": 0, "done": 1, "failed": 1}
    assert report["recent_failures"][0]["last_error"] == "MalformedReply: x"
    text = CliRunner().invoke(cli, ["status"]).output
    assert "observer: " in text and "claude-mem queue retry" in text
