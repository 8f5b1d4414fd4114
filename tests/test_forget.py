"""`forget` leaves no byte behind: the raw database, its WAL and every backup are grepped."""

import glob
import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.recall import forget as forgetting
from claude_mem.recall.remember import remember
from claude_mem.store import backup, db
from recall_seed import add_observation, add_prompt, add_session, add_summary, seed_project

PROJECT = "/home/dev/proj"


def raw_files(data_dir: str) -> list[str]:
    files = [path for path in glob.glob(os.path.join(data_dir, "claude-mem.db*"))]
    return files + glob.glob(os.path.join(data_dir, "backups", "*"))


def grep(data_dir: str, needle: bytes) -> list[str]:
    """Files whose raw bytes contain `needle` (case-insensitive)."""
    hits = []
    for path in raw_files(data_dir):
        with open(path, "rb") as handle:
            if needle.lower() in handle.read().lower():
                hits.append(os.path.basename(path))
    return hits


@pytest.fixture
def store(data_dir):
    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # keep old page images in the WAL, the hard case
    seed_project(conn, "/home/dev/other", 30)
    session = add_session(conn, "sess-secret", PROJECT)
    add_prompt(conn, session, 1, "Where does Quokkamarker live in the codebase?")
    conn.execute(
        "INSERT INTO pending_events (event_key, session_id, kind, payload, status)"
        " VALUES ('ev-secret', ?, 'tool', '{\"tool_response\": \"Quokkamarker found\"}', 'done')",
        (session,),
    )
    obs = add_observation(conn, PROJECT, "Quokkamarker lives in the billing module", session_id=session,
                          narrative="The Quokkamarker constant is read by the billing module at start.")
    conn.execute("INSERT INTO observation_sources VALUES (?, (SELECT id FROM pending_events WHERE event_key = 'ev-secret'))", (obs,))
    add_summary(conn, session, PROJECT, request="Find Quokkamarker", learned="Quokkamarker is in billing")
    yield conn, obs
    conn.close()


def test_forget_session_removes_every_byte_from_db_wal_and_backups(store, data_dir):
    conn, _ = store
    backup.snapshot(str(data_dir), keep=5)
    assert {"claude-mem.db-wal"} <= set(grep(str(data_dir), b"quokkamark"))
    assert any(name.startswith("claude-mem-") for name in grep(str(data_dir), b"quokkamark"))
    result = CliRunner().invoke(cli, ["forget", "--session", "sess-secret", "--yes", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["counts"] == {"prompts": 1, "pending_events": 1, "summaries": 1, "observations": 1, "sessions": 1}
    assert len(report["backups"]["rewritten"]) == 1 and report["backups"]["pruned"] == []
    conn.close()
    assert grep(str(data_dir), b"quokkamark") == []
    # The rest survives, in the database and in the rewritten backup.
    for path in [db.db_path(str(data_dir)), *report["backups"]["rewritten"]]:
        check = sqlite3.connect(path)
        assert check.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 30
        assert check.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'lease'").fetchone()[0] > 0
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        check.close()


def test_forget_one_observation_by_id(store, data_dir):
    conn, obs = store
    backup.snapshot(str(data_dir), keep=5)
    report = forgetting.forget(conn, str(data_dir), ids=[obs])
    assert report["counts"] == {"observations": 1, "events": 1}
    conn.close()
    hits = grep(str(data_dir), b"billing module")
    assert hits == [], hits
    check = sqlite3.connect(db.db_path(str(data_dir)))
    assert check.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 2  # only the observation went
    assert check.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 1
    check.close()


def test_forget_one_observation_keeps_its_twins_of_other_sessions_and_notes(data_dir):
    """A content hash is unique per session only: forgetting #N must not take its twins along."""
    conn = db.connect(db.db_path(str(data_dir)))
    first, second = add_session(conn, "sess-a", PROJECT), add_session(conn, "sess-b", PROJECT)
    gone = add_observation(conn, PROJECT, "Retry the upload twice", session_id=first)
    twin = add_observation(conn, PROJECT, "Retry the upload twice", session_id=second)
    note = remember(conn, "Retry the upload twice", PROJECT)["id"]
    conn.execute("UPDATE observations SET content_hash = 'same-digest' WHERE id IN (?, ?, ?)", (gone, twin, note))
    backup.snapshot(str(data_dir), keep=5)

    def survivors(path: str) -> set[int]:
        check = sqlite3.connect(path)
        try:
            return {row[0] for row in check.execute("SELECT id FROM observations WHERE content_hash = 'same-digest'")}
        finally:
            check.close()

    report = forgetting.forget(conn, str(data_dir), ids=[gone])
    assert report["counts"]["observations"] == 1 and len(report["backups"]["rewritten"]) == 1
    for path in [db.db_path(str(data_dir)), *report["backups"]["rewritten"]]:
        assert survivors(path) == {twin, note}, path
    report = forgetting.forget(conn, str(data_dir), ids=[note])  # a manual note: (project, hash, no session)
    for path in [db.db_path(str(data_dir)), *report["backups"]["rewritten"]]:
        assert survivors(path) == {twin}, path
    conn.close()


def test_forget_project_and_unreadable_backup_is_pruned(store, data_dir):
    conn, _ = store
    os.makedirs(os.path.join(data_dir, "backups"), exist_ok=True)
    broken = os.path.join(data_dir, "backups", "claude-mem-20200101T000000Z.db")
    with open(broken, "wb") as handle:
        handle.write(b"SQLite format 3\x00" + b"Quokkamarker" * 100)
    backup.snapshot(str(data_dir), keep=5)
    report = forgetting.forget(conn, str(data_dir), project=PROJECT)
    assert report["backups"]["pruned"] == [broken]
    assert len(report["backups"]["rewritten"]) == 1
    conn.close()
    assert grep(str(data_dir), b"quokkamark") == []


def test_forget_needs_exactly_one_target(store):
    conn, obs = store
    with pytest.raises(ValueError, match="one of them"):
        forgetting.plan(conn, [obs], session="sess-secret")
    with pytest.raises(ValueError, match="nothing stored for project"):
        forgetting.plan(conn, project="/nowhere")


def test_backups_are_named_in_one_place_so_forget_scrubs_whatever_the_snapshots_are_called(
        store, data_dir, monkeypatch):
    """Regression: backup naming was defined in two modules; renaming it in one would have let
    snapshots escape `forget`. Both now read `claude_mem.paths`."""
    from claude_mem import paths

    conn, obs = store
    monkeypatch.setattr(paths, "BACKUP_PREFIX", "memory-snapshot-")
    snapshot = backup.snapshot(str(data_dir), keep=5)
    assert os.path.basename(snapshot).startswith("memory-snapshot-")
    assert backup.list_backups(str(data_dir)) == [snapshot]
    report = forgetting.forget(conn, str(data_dir), ids=[obs])
    assert report["backups"]["rewritten"] == [snapshot]
    with open(snapshot, "rb") as handle:
        assert b"billing module" not in handle.read()


def test_forgetting_an_observation_takes_the_summary_of_its_turn_and_says_so(data_dir):
    """Issue 26: the turn's summary restates the observation, so forget means gone means both."""
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "sess-turns", PROJECT)
    conn.execute("INSERT INTO pending_events (event_key, session_id, kind, prompt_number, payload, status)"
                 " VALUES ('ev-turn2', ?, 'tool', 2, '{}', 'done')", (session,))
    by_number = add_observation(conn, PROJECT, "Wallabyflag is read at boot", session_id=session)
    conn.execute("UPDATE observations SET prompt_number = 1 WHERE id = ?", (by_number,))
    by_source = add_observation(conn, PROJECT, "Numbatflag gates the export", session_id=session)
    conn.execute("INSERT INTO observation_sources VALUES (?, (SELECT id FROM pending_events WHERE event_key = 'ev-turn2'))",
                 (by_source,))
    first = add_summary(conn, session, PROJECT, learned="Wallabyflag is read at boot")
    second = add_summary(conn, session, PROJECT, learned="Numbatflag gates the export")
    other = add_summary(conn, session, PROJECT, learned="Dingoflag is unrelated")
    for summary, number in ((first, 1), (second, 2), (other, 3)):
        conn.execute("UPDATE summaries SET prompt_number = ? WHERE id = ?", (number, summary))
    note = remember(conn, "Wallabyflag notes have no turn", PROJECT)["id"]
    backup.snapshot(str(data_dir), keep=5)

    planned = forgetting.plan(conn, [by_number])
    assert planned["counts"] == {"observations": 1, "events": 0, "summaries": 1}
    assert planned["describe"] == f"1 observation(s) (#{by_number}) and the summary of its turn (S{first})"
    assert forgetting.plan(conn, [note])["counts"] == {"observations": 1, "events": 0}  # a note has no turn
    conn.close()

    result = CliRunner().invoke(cli, ["forget", str(by_number), "--yes"])
    assert result.exit_code == 0, result.output
    assert f"the summary of its turn (S{first})" in result.output and "1 summaries" in result.output
    result = CliRunner().invoke(cli, ["forget", str(by_source), "--yes", "--json"])
    report = json.loads(result.stdout)
    assert report["counts"]["summaries"] == 1 and report["removed"]["summaries"] == [second]
    assert f"S{second}" in report["forgot"]

    def found(query: str) -> list[tuple[str, int]]:
        result = CliRunner().invoke(cli, ["search", query, "--json", "--project", PROJECT, "--kind", "observation",
                                          "--kind", "summary"])
        return [(item["kind"], item["id"]) for item in json.loads(result.stdout)["items"]]

    assert found("Wallabyflag") == [("observation", note)]  # neither the observation nor its summary
    assert found("Numbatflag") == [] and found("Dingoflag") == [("summary", other)]
    for path in [db.db_path(str(data_dir)), *report["backups"]["rewritten"]]:
        check = sqlite3.connect(path)
        assert [r[0] for r in check.execute("SELECT id FROM summaries ORDER BY id")] == [other], path
        assert check.execute("SELECT COUNT(*) FROM observations WHERE id = ?", (note,)).fetchone()[0] == 1
        check.close()
    assert grep(str(data_dir), b"wallabyflag is read") == []


def test_forgetting_the_newest_observation_never_hands_its_id_to_the_next(data_dir):
    """Issue 26: `#N` cited earlier must never come to name another note (ids are AUTOINCREMENT, m012)."""
    here = str(data_dir.parent)
    first = json.loads(CliRunner().invoke(cli, ["remember", "Quollmarker one", "--project", here, "--json"]).stdout)
    newest = json.loads(CliRunner().invoke(cli, ["remember", "Quollmarker two", "--project", here, "--json"]).stdout)
    assert CliRunner().invoke(cli, ["forget", str(newest["id"]), "--yes"]).exit_code == 0
    again = json.loads(CliRunner().invoke(cli, ["remember", "Quollmarker three", "--project", here, "--json"]).stdout)
    assert again["id"] > newest["id"] > first["id"]
    shown = CliRunner().invoke(cli, ["show", str(newest["id"])])
    assert "Quollmarker three" not in shown.output
