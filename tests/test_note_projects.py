"""One write path for notes (issue 26 item 7): `remember` registers its checkout and the checkout's
remote the way a session start does, so a note made before any session stays with its checkout once a
second checkout of the same remote becomes known — through real git clones and the real hook."""

import json
import sqlite3

from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.store import db
from claude_mem.store import projects as store_projects
from hook_support import rows
from test_project_identity import clones_of_one_remote, env, new_repo, session_project, start  # noqa: F401  (env is a fixture)


def clones(tmp_path):
    return clones_of_one_remote(tmp_path, "notes", "a", "b")


def shown_here(monkeypatch, where, needle: str) -> tuple[bool, bool]:
    """(in `context`, in `search --project .`) run at `where`."""
    monkeypatch.chdir(where)
    context = CliRunner().invoke(cli, ["context"])
    assert context.exit_code == 0, context.output
    search = CliRunner().invoke(cli, ["search", needle, "--project", ".", "--json"])
    assert search.exit_code == 0, search.output
    return needle in context.output, len(json.loads(search.stdout)["items"]) == 1


def test_a_note_made_before_any_session_stays_with_its_checkout(data_dir, tmp_path, env, monkeypatch):  # noqa: F811
    one, two = clones(tmp_path)
    monkeypatch.chdir(one)
    made = CliRunner().invoke(cli, ["remember", "Kiwimarker releases are cut from the main branch"])
    assert made.exit_code == 0, made.output
    assert rows(data_dir, "SELECT key FROM projects") == [(str(one),)]
    assert shown_here(monkeypatch, one, "Kiwimarker") == (True, True)

    context = start("b1", two, env)  # a session in the second clone: same remote, same project
    assert "Kiwimarker" in context
    assert session_project(data_dir, "b1") == str(one)
    assert shown_here(monkeypatch, one, "Kiwimarker") == (True, True)
    assert shown_here(monkeypatch, two, "Kiwimarker") == (True, True)
    # A note made in the second clone goes to the same project, and `--project PATH` registers too.
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["remember", "Emumarker tags are signed", "--project", str(two)]).exit_code == 0
    assert shown_here(monkeypatch, one, "Emumarker") == (True, True)


def test_notes_stored_unregistered_by_an_older_version_stay_with_their_checkout(data_dir, tmp_path, env, monkeypatch):  # noqa: F811
    """A note stored under a path that was never registered (before this fix) is still that path's, even
    after another checkout of the same remote registered first."""
    one, two = clones(tmp_path)
    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("INSERT INTO observations (project, type, title, narrative, content_hash)"
                 " VALUES (?, 'decision', 'Lorikeetmarker old note', 'stored unregistered', 'h-old')", (str(one),))
    conn.close()
    start("b1", two, env)
    assert session_project(data_dir, "b1") == str(two)
    assert shown_here(monkeypatch, one, "Lorikeetmarker") == (True, True)
    check = sqlite3.connect(db.db_path(str(data_dir)))
    assert store_projects.project_here(check, str(one), {}) == str(one)
    check.close()
