"""Project identity beyond a path (issue 14 item 4): the remote URL recorded with each project, a
moved or re-cloned checkout resolving to its first-known key through the real hooks, `projects` and
`projects merge`."""

import json
import os
import shutil
import sqlite3

import pytest

from claude_mem import project
from claude_mem.recall.remember import remember
from claude_mem.store import db, migrations
from claude_mem.store import projects as store_projects
from conftest import require_executable
from hook_support import rows, run_hook
from test_project import git


@pytest.mark.parametrize(("url", "expected"), [
    ("git@github.com:Org/Repo.git", "github.com/org/repo"),
    ("ssh://git@github.com/org/repo", "github.com/org/repo"),
    ("https://user:token@github.com/org/repo.git/", "github.com/org/repo"),
    ("https://ghp_abc123@GitHub.com:443/org/repo.git", "github.com/org/repo"),
    ("http://u:p@git.example.com/a/b.git?x=1#frag", "git.example.com/a/b"),
    ("ssh://git@host:2222/~user/repo.git", "host/~user/repo"),
    ("git://host.xz/path/p.git", "host.xz/path/p"),
    ("host:path/repo.git", "host/path/repo"),
    ("/srv/git/app.git/", "file:///srv/git/app"),
    ("file:///srv/git/app.git", "file:///srv/git/app"),
    ("../relative/repo.git", None),
    ("relative/repo", None),
    ("https://token@github.com", None),
    ("", None),
    ("   ", None),
    ("https://github.com/org/re po", None),
    ("\x00\x01garbage", None),
    ("/", None),
])
def test_remote_urls_normalise_to_one_form_without_credentials(url, expected):
    assert project.normalise_remote(url) == expected


def write_config(tmp_path, text: str | bytes) -> str:
    git_dir = tmp_path / "gitdir"
    git_dir.mkdir(exist_ok=True)
    (git_dir / "config").write_bytes(text.encode() if isinstance(text, str) else text)
    return str(git_dir)


@pytest.mark.parametrize(("config", "expected"), [
    ('[remote "upstream"]\n\turl = git@github.com:up/r.git\n[remote "origin"]\n\turl = https://t@github.com/me/r.git\n',
     "github.com/me/r"),
    ('[remote "upstream"]\n\turl = git@github.com:up/r.git\n[remote "fork"]\n\turl = git@github.com:me/r.git\n',
     "github.com/up/r"),
    ('[core]\n\tbare = false\n', None),
    ('[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n', None),
    ('[Remote "origin"]\n\tURL = "git@Example.com:A/B.git" ; a comment\n', "example.com/a/b"),
    ('[remote "origin"]\n\turl = ../local-only\n[remote "backup"]\n\turl = git@h.io:x/y\n', "h.io/x/y"),
    ('url = git@github.com:outside/section.git\n[remote "origin"\n\turl = git@github.com:bad/header.git\n', None),
    (b'\xff\xfe\x00[remote "origin"]\n\turl = \xc3(\x00git@github.com:o/r.git\n', None),
    (b"\x00" * 10_000, None),
])
def test_remote_read_from_git_config(tmp_path, config, expected):
    assert project.remote_of(write_config(tmp_path, config)) == expected


def test_huge_config_is_read_only_up_to_its_limit(tmp_path):
    padding = "# " + "x" * 1000 + "\n"
    early = '[remote "origin"]\n\turl = git@github.com:o/early.git\n' + padding * 1000
    assert project.remote_of(write_config(tmp_path, early)) == "github.com/o/early"
    late = padding * 1000 + '[remote "origin"]\n\turl = git@github.com:o/late.git\n'
    assert project.remote_of(write_config(tmp_path, late)) is None


def test_no_config_or_no_git_dir(tmp_path):
    assert project.remote_of(None) is None
    assert project.remote_of(str(tmp_path / "missing")) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project.identity(str(plain), {}) == (str(plain), None)


# --- real repositories through the real hooks ------------------------------------------------------

@pytest.fixture
def env(monkeypatch):
    require_executable("git")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return {"CLAUDE_PROJECT_DIR": ""}


def new_repo(path, remote: str | None = None):
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    (path / "README").write_text("x")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    if remote:
        git("remote", "add", "origin", remote, cwd=path)
    return path


def clones_of_one_remote(tmp_path, name: str, first: str, second: str):
    """Two clones (in `first/name` and `second/name`) of one bare repository `server/name.git`."""
    bare = tmp_path / "server" / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    seed = new_repo(tmp_path / "seed")
    git("push", "-q", str(bare), "main", cwd=seed)
    for parent in (first, second):
        git("clone", "-q", str(bare), str(tmp_path / parent / name), cwd=tmp_path)
    return tmp_path / first / name, tmp_path / second / name


def start(session: str, cwd, env) -> str:
    """Run the session-start hook at `cwd`; the context it injects."""
    result = run_hook("session-start", {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
                                        "hook_event_name": "SessionStart", "source": "startup"}, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def session_project(data_dir, session: str) -> str:
    return rows(data_dir, "SELECT project FROM sessions WHERE content_session_id = ?", (session,))[0][0]


def note(data_dir, key: str, text: str) -> None:
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        remember(conn, text, key, "decision", text)
    finally:
        conn.close()


def test_a_moved_checkout_keeps_its_project(data_dir, tmp_path, env):
    first = new_repo(tmp_path / "code" / "app", "git@github.com:acme/app.git")
    start("s1", first, env)
    assert session_project(data_dir, "s1") == str(first)
    note(data_dir, str(first), "Chose WAL mode for the capture database")
    moved = tmp_path / "elsewhere" / "app-renamed"
    moved.parent.mkdir()
    shutil.move(str(first), str(moved))
    context = start("s2", moved, env)
    assert session_project(data_dir, "s2") == str(first)
    assert "Chose WAL mode" in context
    prompt = run_hook("user-prompt", {"session_id": "s2", "transcript_path": "/t", "cwd": str(moved / "README"),
                                      "hook_event_name": "UserPromptSubmit", "prompt": "hello"}, env=env)
    assert prompt.returncode == 0
    assert {row[0] for row in rows(data_dir, "SELECT project FROM sessions")} == {str(first)}
    assert rows(data_dir, "SELECT alias, project FROM project_aliases") == [(str(moved), str(first))]


def test_a_fresh_clone_of_the_same_remote_shares_memory(data_dir, tmp_path, env):
    one, two = clones_of_one_remote(tmp_path, "lib", "one", "two")
    start("a", one, env)
    note(data_dir, str(one), "The parser keeps unknown lines and counts them")
    context = start("b", two, env)
    assert "The parser keeps unknown lines" in context
    assert session_project(data_dir, "b") == str(one)
    assert rows(data_dir, "SELECT key, remote FROM projects") == [(str(one), "file://" + str(tmp_path / "server" / "lib"))]
    worktree = tmp_path / "wt" / "feature"
    git("worktree", "add", "-q", str(worktree), "-b", "feature", cwd=two)
    start("c", worktree, env)
    assert session_project(data_dir, "c") == str(one)


def test_different_remotes_and_plain_directories_stay_apart(data_dir, tmp_path, env):
    left = new_repo(tmp_path / "left" / "api", "https://github.com/acme/api.git")
    right = new_repo(tmp_path / "right" / "api", "https://github.com/other/api.git")
    plain = tmp_path / "notes"
    plain.mkdir()
    start("l", left, env)
    note(data_dir, str(left), "Left uses tokens in cookies")
    assert "Left uses tokens" not in start("r", right, env)
    assert "Left uses tokens" not in start("p", plain, env)
    assert [session_project(data_dir, s) for s in ("l", "r", "p")] == [str(left), str(right), str(plain)]


def test_credentials_in_a_remote_are_never_stored(data_dir, tmp_path, env):
    repo = new_repo(tmp_path / "secret", "https://deploy:ghp_S3cretT0ken1234567890@github.com/acme/secret.git")
    start("s", repo, env)
    assert rows(data_dir, "SELECT remote FROM projects") == [("github.com/acme/secret",)]
    for name in os.listdir(data_dir):
        path = os.path.join(data_dir, name)
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                assert b"S3cretT0ken" not in handle.read()


def test_projects_stored_before_m007_become_projects_and_learn_their_remote(data_dir, tmp_path, env):
    repo = new_repo(tmp_path / "old", "git@github.com:acme/old.git")
    path = db.db_path(str(data_dir))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path)
    migrations.migrate(conn, target=migrations.MIGRATIONS.index(migrations.m007_projects))
    conn.execute("INSERT INTO sessions (content_session_id, project, started_at) VALUES ('old', ?, '2025-01-02T00:00:00Z')",
                 (str(repo),))
    conn.commit()
    conn.close()
    conn = db.connect(path)
    assert conn.execute("SELECT key, remote, first_seen FROM projects").fetchall() == [
        (str(repo), None, "2025-01-02T00:00:00Z")]
    conn.close()
    start("new", repo, env)
    assert rows(data_dir, "SELECT key, remote FROM projects") == [(str(repo), "github.com/acme/old")]
    clone = tmp_path / "clone"
    shutil.copytree(repo, clone)
    start("copy", clone, env)
    assert session_project(data_dir, "copy") == str(repo)


def test_every_surface_resolves_a_moved_checkout_alike(data_dir, tmp_path, env, monkeypatch):
    first = new_repo(tmp_path / "a" / "svc", "git@gitlab.com:team/svc.git")
    start("s1", first, env)
    moved = tmp_path / "b" / "svc"
    moved.parent.mkdir()
    shutil.move(str(first), str(moved))
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        assert store_projects.project_here(conn, str(moved / "README"), {}) == str(first)
        assert store_projects.project_of_path(conn, str(moved)) == str(first)
        from claude_mem.cli.recall import current_project
        from claude_mem.recall.common import resolve_project

        assert resolve_project(conn, str(moved)) == str(first)
        monkeypatch.chdir(moved)
        assert current_project(conn, None) == str(first)
        from claude_mem.mcp_server.calls import here

        assert here(conn) == str(first)
    finally:
        conn.close()
    from claude_mem.hooks import statusline

    note(data_dir, str(first), "Statusline counts this note")
    assert statusline.line(json.dumps({"cwd": str(moved)}).encode(), str(data_dir)).startswith("memory: 1 note")


# --- claude-mem projects / projects merge ----------------------------------------------------------

def cli_run(*args: str, input: str | None = None):
    from click.testing import CliRunner

    from claude_mem.cli import cli

    return CliRunner(env={"COLUMNS": "250"}).invoke(cli, list(args), input=input)


@pytest.fixture
def two_projects(data_dir, tmp_path, env):
    """Two checkouts the user knows are one repository (an old mirror and the real remote), with memory."""
    old = new_repo(tmp_path / "mirror" / "tool", "https://mirror.example.com/acme/tool.git")
    new = new_repo(tmp_path / "src" / "tool-ng", "git@github.com:acme/tool.git")
    start("old-1", old, env)
    run_hook("user-prompt", {"session_id": "old-1", "transcript_path": "/t", "cwd": str(old),
                             "hook_event_name": "UserPromptSubmit", "prompt": "fix the zebra parser"}, env=env)
    note(data_dir, str(old), "Zebra parser rejects tabs")
    start("new-1", new, env)
    note(data_dir, str(new), "Release script signs wheels")
    return old, new


def test_projects_lists_keys_names_remotes_counts(two_projects):
    old, new = two_projects
    result = cli_run("projects", "--json")
    assert result.exit_code == 0, result.output
    listed = {row["key"]: row for row in json.loads(result.output)}
    assert listed[str(old)]["remote"] == "mirror.example.com/acme/tool"
    assert listed[str(old)]["name"] == "tool" and listed[str(new)]["name"] == "tool-ng"
    assert (listed[str(old)]["sessions"], listed[str(old)]["observations"]) == (1, 1)
    assert listed[str(new)]["last_activity"]
    table = cli_run("projects")
    assert table.exit_code == 0 and "github.com/acme/tool" in table.output and "tool-ng" in table.output


def test_merge_needs_confirmation_and_refuses_without_a_terminal(two_projects, data_dir, monkeypatch):
    old, new = two_projects
    refused = cli_run("projects", "merge", "tool", "tool-ng")
    assert refused.exit_code == 1 and "--yes" in refused.output
    monkeypatch.setattr("claude_mem.cli.projects._interactive", lambda: True)
    declined = cli_run("projects", "merge", "tool", "tool-ng", input="n\n")
    assert declined.exit_code == 1 and "Aborted" in declined.output
    assert "1 session, 1 prompt, 1 event, 1 observation, 0 summaries" in declined.output
    assert session_project(data_dir, "old-1") == str(old)
    accepted = cli_run("projects", "merge", "tool", "tool-ng", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert session_project(data_dir, "old-1") == str(new)


def test_merge_joins_memory_and_future_sessions_follow(two_projects, data_dir, tmp_path, env):
    old, new = two_projects
    result = cli_run("projects", "merge", str(old / "README"), str(new), "--yes")
    assert result.exit_code == 0, result.output
    assert f"into tool-ng ({new})" in result.output
    assert {row[0] for row in rows(data_dir, "SELECT project FROM observations")} == {str(new)}
    context = start("new-2", new, env)
    assert "Zebra parser rejects tabs" in context and "Release script signs wheels" in context
    assert session_project(data_dir, "new-2") == str(new)
    start("old-2", old, env)
    assert session_project(data_dir, "old-2") == str(new)
    # A fresh clone of the old remote joins the merged project too.
    reclone = new_repo(tmp_path / "again" / "tool", "https://user:pw@mirror.example.com/acme/tool")
    start("again", reclone, env)
    assert session_project(data_dir, "again") == str(new)
    search = cli_run("search", "zebra", "--project", "tool-ng", "--json")
    assert search.exit_code == 0 and "Zebra parser" in search.output
    listed = json.loads(cli_run("projects", "--json").output)
    assert [row["key"] for row in listed] == [str(new)]
    assert listed[0]["aliases"] == sorted([str(old), str(reclone), "mirror.example.com/acme/tool"])


def test_merge_of_unknown_or_identical_projects_is_a_clear_error(two_projects):
    old, _new = two_projects
    unknown = cli_run("projects", "merge", "nope", "tool-ng", "--yes")
    assert unknown.exit_code == 1 and "unknown project 'nope'" in unknown.output
    same = cli_run("projects", "merge", "tool", str(old), "--yes")
    assert same.exit_code == 1 and "are the same project" in same.output
