"""`claude-mem projects exclude|include [PATH]` (issue 30, item 4): a project in `excluded_projects` is
never captured and shown no memory — checked through the real hook commands, with and without a
running worker's capture socket — and the listing marks it."""

import json
import os

import pytest
from click.testing import CliRunner

from claude_mem import settings
from claude_mem.cli.group import cli
from hook_support import run_hook
from recall_seed import git_project
from test_hookpath_socket import Worker
from test_switch import captured, run_session, seeded, snapshot


@pytest.fixture
def project(tmp_path):
    cwd, key = git_project(tmp_path)
    os.makedirs(os.path.join(cwd, "src", "deep"))
    return cwd, key


def invoke(*args: str, cwd: str | None = None):
    runner = CliRunner(env={"COLUMNS": "300"})  # a table of long temp paths, whole
    here = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        return runner.invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(here)


def file_patterns() -> list[str]:
    return settings.read_file().get("excluded_projects", [])


def test_exclude_resolves_the_directory_to_its_project_and_include_undoes_it(data_dir, project):
    cwd, key = project
    done = invoke("projects", "exclude", cwd=os.path.join(cwd, "src", "deep"))  # PATH defaults to the cwd
    assert done.exit_code == 0, done.output
    assert f"Excluded {key}" in done.output and f"claude-mem forget --project {key}" in done.output
    assert "stays" in done.output
    assert file_patterns() == [key]
    again = json.loads(invoke("projects", "exclude", os.path.join(cwd, "src"), "--json").output)
    assert again == {"action": "exclude", "project": key, "changed": False, "excluded": True, "excluded_projects": [key]}
    done = invoke("projects", "include", cwd)
    assert f"Included {key} again" in done.output and file_patterns() == []
    answer = json.loads(invoke("projects", "include", cwd, "--json").output)
    assert answer["changed"] is False and answer["excluded"] is False


def test_a_path_with_glob_characters_excludes_only_itself(data_dir, tmp_path):
    odd = tmp_path / "a[1]"
    (odd / ".git").mkdir(parents=True)
    (tmp_path / "a1" / ".git").mkdir(parents=True)
    assert invoke("projects", "exclude", str(odd)).exit_code == 0
    from claude_mem.capture.payload import excluded

    patterns = file_patterns()
    assert excluded(str(odd), "", patterns) and not excluded(str(tmp_path / "a1"), "", patterns)
    assert invoke("projects", "include", str(odd)).exit_code == 0 and file_patterns() == []


def test_include_leaves_a_broader_pattern_alone_and_names_it(data_dir, project):
    cwd, key = project
    broad = os.path.dirname(key) + "/*"
    settings.update_file({"excluded_projects": [broad]})
    done = invoke("projects", "include", cwd)
    assert f"still excluded by {broad}" in done.output and file_patterns() == [broad]


def test_a_missing_directory_is_a_clear_error(data_dir, tmp_path):
    done = CliRunner().invoke(cli, ["projects", "exclude", str(tmp_path / "nowhere")])
    assert done.exit_code == 1 and "not a directory" in done.output and not file_patterns()


def test_the_listing_marks_excluded_projects(data_dir, project, tmp_path):
    cwd, key = project
    other_cwd, other = git_project(tmp_path / "other")
    seeded(data_dir, key)
    seeded(data_dir, other)
    invoke("projects", "exclude", cwd)
    rows = {row["key"]: row for row in json.loads(invoke("projects", "--json").output)}
    assert rows[key]["excluded"] is True and rows[other]["excluded"] is False
    table = invoke("projects").output
    assert "(excluded)" in table and f"Never captured (excluded_projects): {key}" in table


def test_hooks_of_an_excluded_project_create_no_database_and_print_nothing(data_dir, project):
    cwd, _key = project
    assert invoke("projects", "exclude", cwd).exit_code == 0
    printed = run_session(cwd, None)
    assert not os.path.exists(os.path.join(data_dir, "claude-mem.db"))
    assert all(out == {} for outs in printed.values() for out in outs)


def without_caches(files: dict[str, str]) -> dict[str, str]:
    """The data dir's content without `cache/` (compiled patterns any process may rebuild: never user data)."""
    return {path: digest for path, digest in files.items() if not path.startswith("cache" + os.sep)}


def test_hooks_of_an_excluded_project_leave_the_store_unchanged_with_or_without_a_worker(data_dir, project, tmp_path):
    cwd, key = project
    seeded(data_dir, key)
    other_cwd, _other = git_project(tmp_path / "other")
    assert invoke("projects", "exclude", cwd).exit_code == 0
    before = without_caches(snapshot(data_dir))
    printed = run_session(cwd, None)
    assert all(out == {} for outs in printed.values() for out in outs)
    assert without_caches(snapshot(data_dir)) == before
    worker = Worker(str(data_dir))
    try:
        run_session(cwd, None)
        assert without_caches(snapshot(data_dir)) == before
        # another project's session is captured, through the worker for its post-tool events
        run_session(other_cwd, None)
        assert captured(data_dir)[2] == 5
    finally:
        worker.close()


def test_a_hook_outside_the_project_is_still_captured(data_dir, project, tmp_path):
    cwd, _key = project
    assert invoke("projects", "exclude", cwd).exit_code == 0
    other_cwd, _other = git_project(tmp_path / "other")
    payload = {"session_id": "s-other", "cwd": other_cwd, "hook_event_name": "SessionStart", "source": "startup"}
    done = run_hook("session-start", payload)
    assert done.returncode == 0 and "additionalContext" in done.stdout.decode()
    assert captured(data_dir)[0] == 1
