"""`claude-mem import claude-mem` (issue 14, item 2): the original (TypeScript) claude-mem's database,
read-only, brought over as it is — every observation searchable, projects placed by --map, by the
name of a project of ours or by the name itself, idempotent, redacted — and bad input (not SQLite,
another schema, a lock held by its worker, garbage in list columns) reported, nothing half-written."""

import json
import os
import shutil
import sqlite3

import pytest
from click.testing import CliRunner, Result

from claude_mem import store
from claude_mem.cli import cli
from claude_mem.importers import original
from claude_mem.store import db, foreign
from conftest import FIXTURES
from recall_seed import add_session
from secret_corpus import SECRETS

FIXTURE = os.path.join(FIXTURES, "claude-mem-13.25.3", "claude-mem.db")
TABLES = ("sessions", "prompts", "observations", "summaries")
THEIRS = {"sessions": "sdk_sessions", "prompts": "user_prompts", "observations": "observations",
          "summaries": "session_summaries"}


@pytest.fixture
def source(tmp_path) -> str:
    """A copy of the fixture (opening it, even read-only, leaves -wal/-shm files beside it)."""
    folder = tmp_path / "theirs"
    folder.mkdir()
    return str(shutil.copy(FIXTURE, folder / "claude-mem.db"))


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["import", "claude-mem", *args], catch_exceptions=False)


def ours(data_dir) -> sqlite3.Connection:
    return store.open(str(data_dir))


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES}


def theirs(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_the_fixture_comes_over_whole_and_searchable(source, data_dir):
    result = run(source)
    assert result.exit_code == 0, result.output
    conn = ours(data_dir)
    expected = {table: theirs(source).execute(f"SELECT COUNT(*) FROM {THEIRS[table]}").fetchone()[0]
                for table in TABLES}
    assert expected["observations"] == 240
    assert counts(conn) == expected
    # Every observation is in the full-text index under its own title.
    for row_id, title in conn.execute("SELECT id, title FROM observations").fetchall():
        phrase = '"' + title.replace('"', '""') + '"'
        assert conn.execute("SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? AND rowid = ?",
                            (phrase, row_id)).fetchone(), title
    found = CliRunner().invoke(cli, ["search", "Bumped null pointer storage module", "--mode", "keyword", "--json"])
    assert found.exit_code == 0 and "Bumped null pointer in storage module" in found.output


def test_columns_survive_exactly(source, data_dir):
    assert run(source).exit_code == 0
    conn = ours(data_dir)
    conn.row_factory = sqlite3.Row
    src = theirs(source)
    src.row_factory = sqlite3.Row
    first = src.execute("SELECT * FROM observations WHERE id = 1").fetchone()
    mine = conn.execute("SELECT * FROM observations WHERE uid = ?",
                        (original.derived_uid("observations", f"{first['memory_session_id']}:1"),)).fetchone()
    for name in ("type", "title", "subtitle", "narrative", "prompt_number"):
        assert mine[name] == first[name], name
    for name in ("facts", "concepts", "files_read", "files_modified"):
        assert json.loads(mine[name]) == json.loads(first[name]), name
    assert mine["created_at"] == first["created_at"] == "2026-08-25T08:47:47.774Z"
    assert mine["project"] == "webapp"
    session = conn.execute("SELECT * FROM sessions WHERE id = ?", (mine["session_id"],)).fetchone()
    theirs_session = src.execute("SELECT * FROM sdk_sessions WHERE memory_session_id = ?",
                                 (first["memory_session_id"],)).fetchone()
    assert (session["content_session_id"], session["memory_session_id"], session["started_at"], session["ended_at"],
            session["status"]) == (theirs_session["content_session_id"], theirs_session["memory_session_id"],
                                   theirs_session["started_at"], theirs_session["completed_at"], "completed")
    summary = src.execute("SELECT * FROM session_summaries WHERE memory_session_id = ?",
                          (first["memory_session_id"],)).fetchone()
    stored = conn.execute("SELECT * FROM summaries WHERE session_id = ?", (session["id"],)).fetchone()
    for name in ("request", "investigated", "learned", "completed", "next_steps", "prompt_number", "created_at"):
        assert stored[name] == summary[name], name
    assert stored["notes"] == "" and json.loads(stored["files_edited"]) == json.loads(summary["files_edited"])
    assert session["title"] == summary["request"]
    prompt = src.execute("SELECT * FROM user_prompts WHERE content_session_id = ?",
                         (theirs_session["content_session_id"],)).fetchone()
    assert tuple(conn.execute("SELECT text, prompt_number, created_at FROM prompts WHERE session_id = ?",
                              (session["id"],)).fetchone()) == (prompt["prompt_text"], prompt["prompt_number"],
                                                         prompt["created_at"])


def test_their_database_is_left_as_it_was(source, data_dir):
    with open(source, "rb") as handle:
        before = handle.read()
    assert run(source).exit_code == 0
    with open(source, "rb") as handle:
        assert handle.read() == before
    assert theirs(source).execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 240


def test_reimport_adds_nothing(source, data_dir):
    assert run(source).exit_code == 0
    conn = ours(data_dir)
    before = counts(conn)
    uids = conn.execute("SELECT group_concat(uid) FROM (SELECT uid FROM observations ORDER BY uid)").fetchone()
    again = run(source)
    assert again.exit_code == 0 and counts(conn) == before
    assert "276" in again.output  # all already here
    assert conn.execute("SELECT group_concat(uid) FROM (SELECT uid FROM observations ORDER BY uid)").fetchone() == uids


def test_dry_run_writes_nothing(source, data_dir):
    result = run(source, "--dry-run")
    assert result.exit_code == 0 and "dry run" in result.output and "240" in result.output
    assert not os.path.exists(db.db_path(str(data_dir)))  # not even an empty database
    conn = ours(data_dir)
    add_session(conn, "live", "/home/dev/other")
    before = counts(conn)
    assert run(source, "--dry-run").exit_code == 0
    assert counts(conn) == before


def test_map_places_a_project_and_context_shows_it(source, data_dir, tmp_path):
    repo = tmp_path / "code" / "webapp-checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    result = run(source, "--map", f"webapp={repo / 'src'}", "--map", "nothere=/tmp")
    assert result.exit_code == 0, result.output
    assert f"webapp → {repo} (--map)" in result.output
    assert "--map nothere: no project of that name" in result.output
    conn = ours(data_dir)
    assert {row[0] for row in conn.execute("SELECT project FROM observations UNION SELECT project FROM sessions")
            } == {str(repo)}
    shown = CliRunner().invoke(cli, ["context", "--project", str(repo)])
    assert shown.exit_code == 0
    assert "null pointer" in shown.output


def test_a_project_of_ours_with_that_name_is_used(source, data_dir):
    conn = ours(data_dir)
    add_session(conn, "live-1", "/home/dev/webapp")
    add_session(conn, "live-2", "/home/dev/api")
    result = run(source)
    assert result.exit_code == 0
    assert "webapp → /home/dev/webapp (a project of ours shown by that name)" in result.output
    assert conn.execute("SELECT DISTINCT project FROM observations").fetchall() == [("/home/dev/webapp",)]


def test_two_projects_of_that_name_are_reported_not_guessed(source, data_dir):
    conn = ours(data_dir)
    add_session(conn, "live-1", "/home/a/webapp")
    add_session(conn, "live-2", "/home/b/webapp")
    result = run(source)
    assert result.exit_code == 0 and "2 projects of ours are called webapp" in result.output
    assert conn.execute("SELECT DISTINCT project FROM observations").fetchall() == [("webapp",)]


def test_not_sqlite(tmp_path, data_dir):
    path = tmp_path / "claude-mem.db"
    path.write_text("this is not a database\n" * 100)
    result = run(str(path))
    assert result.exit_code == 1 and "not a readable SQLite database" in result.output
    assert not os.path.exists(db.db_path(str(data_dir)))


def test_missing_file(tmp_path):
    result = run(str(tmp_path / "nope.db"))
    assert result.exit_code == 1 and "no such file" in result.output


def test_another_schema_names_what_is_missing(source, tmp_path, data_dir):
    conn = theirs(source)
    conn.execute("ALTER TABLE session_summaries RENAME COLUMN learned TO lessons")
    conn.execute("DROP TABLE user_prompts")
    conn.close()
    result = run(source)
    assert result.exit_code == 1
    assert "missing table user_prompts, session_summaries.learned" in result.output
    assert not os.path.exists(db.db_path(str(data_dir)))
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (id INTEGER)")
    result = run(str(other))
    assert result.exit_code == 1 and "missing table sdk_sessions, table user_prompts" in result.output


def test_our_own_database_is_refused(data_dir, tmp_path):
    ours(data_dir).close()
    copy = str(shutil.copy(db.db_path(str(data_dir)), tmp_path / "copy.db"))
    result = run(str(copy))
    assert result.exit_code == 1 and "claude-mem export" in result.output
    result = run(db.db_path(str(data_dir)))
    assert result.exit_code == 1 and "own database" in result.output


def test_read_while_its_worker_holds_the_write_lock(source, data_dir):
    worker = theirs(source)  # WAL, as the original's worker keeps it: readers are not blocked
    worker.execute("BEGIN IMMEDIATE")
    worker.execute("UPDATE observations SET title = 'written meanwhile' WHERE id = 1")
    try:
        result = run(source)
    finally:
        worker.execute("ROLLBACK")
        worker.close()
    assert result.exit_code == 0, result.output
    assert counts(ours(data_dir))["observations"] == 240
    assert not ours(data_dir).execute("SELECT 1 FROM observations WHERE title = 'written meanwhile'").fetchone()


def test_locked_database_is_a_clear_message(source, data_dir, monkeypatch):
    conn = theirs(source)
    conn.execute("PRAGMA journal_mode = DELETE")  # a rollback journal: a writer's exclusive lock blocks readers
    conn.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(foreign, "BUSY_MS", 100)
    try:
        result = run(source)
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    assert result.exit_code == 1
    assert "locked by another program" in result.output and "worker" in result.output
    assert not os.path.exists(db.db_path(str(data_dir)))


def test_garbage_rows_are_reported_and_the_rest_imported(source, data_dir):
    conn = theirs(source)
    conn.execute("UPDATE observations SET facts = 'not json [' WHERE id = 1")
    conn.execute("UPDATE observations SET concepts = '{\"a\": 1}', files_read = '[1, 2]' WHERE id = 2")
    conn.execute("UPDATE observations SET files_modified = NULL, facts = '' WHERE id = 3")
    conn.execute("UPDATE observations SET type = 'email-thread' WHERE id = 4")
    conn.execute("UPDATE observations SET title = NULL, subtitle = NULL, narrative = NULL, text = NULL WHERE id = 5")
    conn.execute("UPDATE observations SET title = NULL, subtitle = NULL WHERE id = 6")
    conn.execute("UPDATE observations SET created_at = 'yesterday', created_at_epoch = 0 WHERE id = 7")
    conn.execute("UPDATE user_prompts SET prompt_number = -3 WHERE id = 2")
    conn.execute("UPDATE session_summaries SET files_read = 'garbage' WHERE id = 1")
    conn.close()
    result = run(source)
    assert result.exit_code == 1
    for expected in ("observations row 1: `facts` is not a JSON list", "observations row 2: `concepts`",
                     "observations row 2: `files_read`", "observations row 5: has no title and no text",
                     "observations row 7: observation `created_at` is not an ISO 8601 time ('yesterday')",
                     "user_prompts row 2: prompt `prompt_number`", "session_summaries row 1: `files_read`",
                     "of type 'email-thread'", "3 row(s) skipped, 4 field(s) imported empty"):
        assert expected in result.output, expected
    mine = ours(data_dir)
    assert counts(mine) == {"sessions": 12, "prompts": 11, "observations": 238, "summaries": 12}
    src = theirs(source)
    narrative = src.execute("SELECT narrative FROM observations WHERE id = 6").fetchone()[0]
    title, kind = mine.execute("SELECT title, type FROM observations WHERE narrative = ?", (narrative,)).fetchone()
    assert narrative.startswith(title) and kind
    assert mine.execute("SELECT type FROM observations WHERE uid = ?", (original.derived_uid(
        "observations", src.execute("SELECT memory_session_id || ':4' FROM observations WHERE id = 4").fetchone()[0]),
    )).fetchone() == ("discovery",)


def test_rows_of_a_vanished_session_are_counted(source, data_dir):
    conn = theirs(source)
    conn.execute("DELETE FROM sdk_sessions WHERE id = 1")  # foreign keys are off: its rows stay behind
    conn.close()
    result = run(source)
    assert result.exit_code == 1 and "observations: 20 row(s) belong to no session" in result.output
    assert counts(ours(data_dir))["observations"] == 220


def test_secrets_are_redacted_on_the_way_in(source, data_dir):
    conn = theirs(source)
    for number, (_name, text, _secret) in enumerate(SECRETS, start=1):
        conn.execute("UPDATE observations SET narrative = narrative || ? , facts = json_array(?) WHERE id = ?",
                     (f"\nwhile debugging:\n{text}", text, number))
    conn.execute("UPDATE user_prompts SET prompt_text = ? WHERE id = 1", (f"deploy with {SECRETS[0][1]}",))
    conn.execute("UPDATE session_summaries SET learned = ? WHERE id = 1", (SECRETS[1][1],))
    conn.close()
    assert run(source).exit_code == 0
    stored = json.dumps([ours(data_dir).execute(f"SELECT * FROM {table}").fetchall() for table in TABLES])
    leaked = [name for name, _text, secret in SECRETS if secret in stored or json.dumps(secret)[1:-1] in stored]
    assert not leaked
    assert "[REDACTED:" in stored


def test_default_database_is_the_originals_not_our_data_dir(tmp_path, data_dir, monkeypatch):
    home = tmp_path / "home"
    (home / ".claude-mem").mkdir()
    shutil.copy(FIXTURE, home / ".claude-mem" / "claude-mem.db")
    result = run("--dry-run")
    assert result.exit_code == 0 and str(home / ".claude-mem" / "claude-mem.db") in result.output.replace("\n", "")
    elsewhere = tmp_path / "their-data"
    elsewhere.mkdir()
    (home / ".claude-mem" / "settings.json").write_text(json.dumps({"CLAUDE_MEM_DATA_DIR": str(elsewhere)}))
    result = run("--dry-run")
    assert result.exit_code == 1 and str(elsewhere / "claude-mem.db") in result.output


def test_bad_map_option(source):
    result = run(source, "--map", "webapp")
    assert result.exit_code == 2 and "NAME=PATH" in result.output


def test_a_dry_run_says_exactly_what_the_import_then_does(source, data_dir):
    """Decided by reads alone (issue 33: at read speed, nothing written and rolled back): the dry run's
    table and counts equal the real import's, into an empty store and into one that holds it all."""
    for _ in range(2):
        planned = run(source, "--dry-run")
        done = run(source)
        assert planned.exit_code == done.exit_code == 0, planned.output
        assert planned.output.split("\n", 1)[1] == done.output.split("\n", 1)[1]  # all but the title line
