"""Claude Code's auto memory beside ours (issue 30 item 5): where it is, indexed read-only, found by every
search surface, never repeated by the session-start index, reported by status and doctor; bad input is a
clear line and everything else works. Real files in temp dirs, real SQLite, the real CLI.

The facts the locator relies on (Claude Code docs `memory.md`, mirror ericbuess/claude-code-docs @e82bac3):
"Each project gets its own memory directory at `~/.claude/projects/<project>/memory/`. The `<project>` path
is derived from the git repository, so all worktrees and subdirectories within the same repo share one auto
memory directory"; `autoMemoryDirectory` "is read from any settings scope: user, project, local, policy, or
--settings … The value must be an absolute path or start with `~/`"; "The first 200 lines of `MEMORY.md`,
or the first 25KB, whichever comes first, are loaded"; `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` turns it off,
as does `autoMemoryEnabled: false`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from claude_mem.cli import cli
from claude_mem.index import notes
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall import auto_memory, context
from claude_mem.runtime import auto_memory as files
from claude_mem.store import auto_memory as repository
from claude_mem.store import db
from recall_seed import add_observation, add_session, stamp
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def claude_home(tmp_path, monkeypatch):
    config = tmp_path / "claude-config"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    for name in ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE", "CLAUDE_CODE_PROJECT_DIR_NAME"):
        monkeypatch.delenv(name, raising=False)
    return config


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "work" / "my_repo.v2"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.setenv("COLUMNS", "200")
    return str(root)


@pytest.fixture
def memory(repo, claude_home):
    """The repo's auto memory directory, created, with an index and one topic note."""
    directory = claude_home / "projects" / files.sanitized(repo) / "memory"
    directory.mkdir(parents=True)
    (directory / "MEMORY.md").write_text("- [Staging deploy](deploy_staging.md) — the staging deploy needs the VPN up\n"
                                         "- Login tests are flaky under parallel load\n")
    (directory / "deploy_staging.md").write_text(
        "---\nname: Staging deploy\ndescription: how the staging deploy works\ntype: project\n---\n"
        f"Run `make deploy-staging` with the VPN up; the key {SECRET} lives in the vault.\n")
    return directory


@pytest.fixture
def conn(data_dir):
    connection = db.connect(db.db_path(str(data_dir)))
    yield connection
    connection.close()


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result


# -- where it is --------------------------------------------------------------------------------------------


def test_the_directory_is_the_sanitized_repository_root_under_the_config_dir(tmp_path):
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    found = files.locate("/Users/me/my_repo.v2", env)
    assert found.directory == str(tmp_path / "cfg" / "projects" / "-Users-me-my-repo-v2" / "memory")
    assert (found.enabled, found.source, found.problems) == (True, "default", [])
    assert files.locate("/x", {"HOME": "/h"}).directory == "/h/.claude/projects/-x/memory"
    named = files.locate("/x", {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "shared"})
    assert named.directory == "/c/projects/shared/memory"


def test_auto_memory_directory_setting_local_then_project_then_user(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root, config = tmp_path / "r", tmp_path / "cfg"
    (root / ".claude").mkdir(parents=True)
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    (config / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/notes/user"}))
    assert files.locate(str(root), env).directory == str(tmp_path / "home" / "notes" / "user")
    (root / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/project-notes"}))
    assert files.locate(str(root), env).directory == "/srv/project-notes"
    (root / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/mine"}))
    found = files.locate(str(root), env)
    assert found.directory == "/srv/mine" and "local settings" in found.source


@pytest.mark.parametrize("value, words", [(42, "not a string"), ("notes/here", "neither an absolute path"),
                                          ("~/", "home directory itself"), ("", "neither an absolute path")])
def test_a_bad_auto_memory_directory_is_a_clear_line_and_the_default_is_used(tmp_path, value, words):
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"autoMemoryDirectory": value}))
    found = files.locate("/r", {"CLAUDE_CONFIG_DIR": str(config)})
    assert found.directory == str(config / "projects" / "-r" / "memory")
    assert len(found.problems) == 1 and words in found.problems[0] and "settings.json" in found.problems[0]


def test_on_or_off_by_environment_and_settings(tmp_path):
    root, config = tmp_path / "r", tmp_path / "cfg"
    (root / ".claude").mkdir(parents=True)
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    assert files.locate(str(root), env).enabled
    (root / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    off = files.locate(str(root), env)
    assert not off.enabled and "autoMemoryEnabled is false in project settings" in off.why_off
    assert files.locate(str(root), {**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}).enabled  # env wins both ways
    (root / ".claude" / "settings.json").write_text("{}")
    gone = files.locate(str(root), {**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert not gone.enabled and gone.why_off == "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"
    (root / ".claude" / "settings.json").write_text("{not json")
    broken = files.locate(str(root), env)
    assert broken.enabled and "not valid JSON" in broken.problems[0]
    (root / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryEnabled": "no"}))
    assert "not true or false" in files.locate(str(root), env).problems[0]


def test_front_matter_as_written_by_hand_and_as_claude_code_rewrites_it():
    fields, body, problem = files.front_matter("---\nname: Tests\ntype: 'feedback'\n---\nAlways -q.\n")
    assert (fields, body, problem) == ({"name": "Tests", "type": "feedback"}, "Always -q.\n", "")
    rewritten = ("---\nname: release-checklist\ndescription: what a release needs\nmetadata:\n  node_type: memory\n"
                 "  type: project\n  modified: 2026-11-26T10:55:20.538Z\n---\n\nBump the version.\n")
    fields, body, problem = files.front_matter(rewritten)
    assert (fields["name"], fields["type"], fields["modified"], body, problem) == (
        "release-checklist", "project", "2026-11-26T10:55:20.538Z", "Bump the version.\n", "")


def test_memory_md_loaded_part_is_200_lines_or_25000_bytes_at_a_line_end():
    assert files.loaded_part("\n".join(f"line {n}" for n in range(300))).count("\n") == 199
    part = files.loaded_part("\n".join(["x" * 99] * 199 + ["y" * 30_000]))  # 200 lines, 25,000 bytes end in the last
    assert len(part.encode()) == 199 * 100 - 1 and part.endswith("x" * 99)


# -- indexed read-only ---------------------------------------------------------------------------------------


def test_sync_indexes_redacted_notes_reads_only_what_changed_and_forgets_deleted_files(conn, memory, repo):
    before = {path.name: path.read_bytes() for path in memory.iterdir()}
    report = auto_memory.sync(conn, repo)
    assert (report["files"], report["read"], report["removed"], report["problems"]) == (2, 2, 0, [])
    stored = repository.note(conn, "deploy_staging.md", repo)[0]
    assert (stored["name"], stored["description"], stored["type"]) == ("Staging deploy", "how the staging deploy works",
                                                                     "project")
    assert SECRET not in stored["body"] and "REDACTED" in stored["body"]  # we never keep a secret
    assert SECRET.encode() not in open(db.db_path(os.environ["CLAUDE_MEM_DATA_DIR"]), "rb").read()
    assert auto_memory.sync(conn, repo)["read"] == 0 and auto_memory.unchanged(conn, repo)  # stat only
    (memory / "feedback_tests.md").write_text("---\nname: Tests\ndescription: run pytest -q\ntype: feedback\n---\nAlways -q.")
    assert not auto_memory.unchanged(conn, repo)
    assert auto_memory.sync(conn, repo)["read"] == 1
    os.utime(memory / "MEMORY.md", ns=(1, 1))  # touched, same bytes: the stat is updated, nothing re-indexed
    assert auto_memory.sync(conn, repo)["read"] == 0 and auto_memory.unchanged(conn, repo)
    (memory / "feedback_tests.md").unlink()
    assert auto_memory.sync(conn, repo)["removed"] == 1
    assert [row["path"] for row in repository.note(conn, "feedback_tests.md", None)] == []
    assert {path.name: path.read_bytes() for path in memory.iterdir()} == before  # read-only: nothing written


def test_damaged_binary_huge_and_looping_input_is_a_clear_line_and_the_rest_is_indexed(conn, memory, repo):
    (memory / "bad_front.md").write_text("---\nname: Half\nthis line is no key value\n---\nbody of the half note\n")
    (memory / "unclosed.md").write_text("---\nname: Never closed\ndescription: zebra words\n")
    (memory / "latin1.md").write_bytes(b"caf\xe9 notes about the kiosk\n")
    (memory / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (memory / "huge.md").write_text("giraffe " * 100_000)
    os.symlink("loop", memory / "loop")  # a symlink loop inside
    report = auto_memory.sync(conn, repo)
    assert report["files"] == 6 and report["binary"] == 1
    lines = "\n".join(report["problems"])
    assert "bad_front.md: front matter line 3 is not `key: value`" in lines
    assert "unclosed.md: front matter is not closed" in lines
    assert "latin1.md: not valid UTF-8" in lines
    assert "huge.md: larger than 256 KB" in lines
    assert "loop: skipped" in lines
    found = {hit["ref"] for hit in search(conn, SearchQuery.build("zebra kiosk giraffe half", kinds=("auto-memory",))).items}
    assert found == {"auto-memory:unclosed.md", "auto-memory:latin1.md", "auto-memory:huge.md", "auto-memory:bad_front.md"}
    assert len(repository.note(conn, "huge.md", repo)[0]["body"]) <= files.MAX_FILE_BYTES
    assert auto_memory.sync(conn, repo)["read"] == 0  # the binary file is not read again either


def test_a_memory_directory_that_is_a_symlink_loop_or_a_file_is_a_clear_line(conn, repo, claude_home):
    directory = claude_home / "projects" / files.sanitized(repo) / "memory"
    directory.parent.mkdir(parents=True)
    os.symlink(directory, directory)
    report = auto_memory.sync(conn, repo)
    assert report["files"] == 0 and "cannot be read" in report["problems"][0]
    directory.unlink()
    directory.write_text("not a directory")
    assert "is not a directory" in auto_memory.sync(conn, repo)["problems"][0]
    assert search(conn, SearchQuery.build("anything", kinds=("observation", "auto-memory"))).items == []


def test_ten_thousand_files_are_capped_newest_first_and_it_says_so(conn, memory, repo):
    for n in range(10_000):
        (memory / f"n{n:05d}.md").write_text(f"note {n}")
        os.utime(memory / f"n{n:05d}.md", ns=(n * 10**9, n * 10**9))
    report = auto_memory.sync(conn, repo)
    assert report["capped"] == 10_002 - files.MAX_FILES and report["files"] == files.MAX_FILES
    assert "more files than the 1000 indexed" in "\n".join(report["problems"])
    assert repository.note(conn, "MEMORY.md", repo) and repository.note(conn, "n09999.md", repo)
    assert not repository.note(conn, "n00000.md", repo)


# -- search on every surface ------------------------------------------------------------------------------


def test_claude_mem_search_finds_a_note_written_a_moment_ago_labelled_with_its_file(data_dir, memory, repo):
    (memory / "reference_grafana.md").write_text(
        "---\nname: Grafana board\ndescription: latency dashboard\ntype: reference\n---\nThe p99 board is grafana/d/latency.\n")
    table = run("search", "latency dashboard").output
    assert "auto-memory:reference_grafana.md" in table and "Grafana board" in table
    found = json.loads(run("search", "latency dashboard", "--json").output)
    assert [(hit["kind"], hit["ref"], hit["type"]) for hit in found["items"]] == [
        ("auto-memory", "auto-memory:reference_grafana.md", "reference")]
    assert json.loads(run("search", "latency", "--kind", "observation", "--json").output)["items"] == []
    shown = run("show", "auto-memory:reference_grafana.md").output
    assert "grafana/d/latency" in shown and "Claude Code auto memory" in shown
    assert "no auto memory note 'nope.md'" in run("show", "auto-memory:nope.md", code=1).output


def test_the_real_claude_mem_search_command_finds_the_note(data_dir, memory, repo):
    (memory / "project_freeze.md").write_text("---\nname: Merge freeze\ntype: project\n---\nNo merges until the audit ends.\n")
    done = subprocess.run([sys.executable, "-m", "claude_mem", "search", "merge freeze audit", "--json"], cwd=repo,
                          capture_output=True, text=True, timeout=60, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    assert [hit["ref"] for hit in json.loads(done.stdout)["items"]] == ["auto-memory:project_freeze.md"]


def test_notes_merge_with_observations_by_score_and_pages_stay_consistent(conn, memory, repo):
    session = add_session(conn, "s1", repo, stamp(2))
    ids = [add_observation(conn, repo, f"Staging deploy step {n} needs the VPN", session_id=session,
                           created_at=stamp(1 + n / 10)) for n in range(5)]
    auto_memory.sync(conn, repo)
    query = SearchQuery.build("staging deploy VPN", mode="keyword", kinds=("observation", "auto-memory"), project=repo)
    whole = search(conn, query)
    assert whole.total == 7 and {hit["kind"] for hit in whole.items} == {"observation", "auto-memory"}
    assert {hit["id"] for hit in whole.items if hit["kind"] == "observation"} == set(ids)
    paged = [hit for offset in range(0, 7, 3)
             for hit in search(conn, SearchQuery.build("staging deploy VPN", mode="keyword", kinds=query.kinds,
                                                       project=repo, limit=3, offset=offset)).items]
    assert [(hit["kind"], hit["id"]) for hit in paged] == [(hit["kind"], hit["id"]) for hit in whole.items]
    filtered = search(conn, SearchQuery.build("staging deploy VPN", mode="keyword", kinds=query.kinds, project=repo,
                                              file="no_such_file.py"))  # a filter of observations: no note either
    assert (filtered.total, filtered.items) == (0, [])


def test_in_hybrid_ranking_the_best_note_scores_as_the_best_word_match():
    found = [{"kind": "observation", "id": 1, "score": 0.95, "created_at": "b"},
             {"kind": "observation", "id": 2, "score": 0.5, "created_at": "a"}]
    marks = [{"kind": "auto-memory", "id": 7, "score": -4.0, "created_at": "c"},
             {"kind": "auto-memory", "id": 8, "score": -1.0, "created_at": "d"}]
    merged = notes._merged(found, marks, "relevance", True)  # noqa: SLF001 - the rule itself
    assert [(hit["kind"], hit["id"], hit["score"]) for hit in merged] == [
        ("observation", 1, 0.95), ("auto-memory", 7, 0.6), ("observation", 2, 0.5), ("auto-memory", 8, 0.15)]


def test_http_search_and_health_through_the_worker_service(data_dir, memory, repo, monkeypatch):
    from claude_mem.worker.app import create_app
    from claude_mem.worker.auto_memory_service import AutoMemoryService
    from test_worker_app import BASE, make_ctx

    conn = db.connect(db.db_path(str(data_dir)))
    add_session(conn, "s-http", repo, stamp(0.1))
    conn.close()
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[AutoMemoryService(interval=0.05)]), base_url=BASE) as client:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (client.get("/health").json()["auto_memory"] or {}).get("files"):
            time.sleep(0.05)
        assert client.get("/health").json()["auto_memory"]["files"] == 2
        (memory / "user_role.md").write_text("---\nname: Role\ndescription: backend engineer\ntype: user\n---\nLikes Rust.\n")
        while time.monotonic() < deadline and client.get("/health").json()["auto_memory"]["files"] != 3:
            time.sleep(0.05)
        found = client.get("/api/search", params={"q": "backend engineer"}).json()
    assert [(hit["kind"], hit["ref"]) for hit in found["items"]] == [("auto-memory", "auto-memory:user_role.md")]


def test_the_first_session_of_a_project_gets_its_notes_synced_at_once(data_dir, memory, repo):
    """Projects are listed again on a new session, not only every minute: a project's first session start
    (which starts the worker) has its notes indexed by the worker's next look."""
    from claude_mem.worker.app import create_app
    from claude_mem.worker.auto_memory_service import PROJECTS_EVERY_S, AutoMemoryService
    from test_worker_app import BASE, make_ctx

    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[AutoMemoryService(interval=0.05)]), base_url=BASE) as client:
        time.sleep(0.3)  # a few looks with no session at all: no project to watch
        assert (client.get("/health").json()["auto_memory"] or {}).get("files") in (0, None)
        conn = db.connect(db.db_path(str(data_dir)))
        add_session(conn, "s-first", repo, stamp(0))
        conn.close()
        deadline = time.monotonic() + PROJECTS_EVERY_S / 6
        while time.monotonic() < deadline and not client.get("/health").json()["auto_memory"].get("files"):
            time.sleep(0.05)
        assert client.get("/health").json()["auto_memory"]["files"] == 2


def test_mcp_search_labels_notes_and_points_to_their_file(conn, memory, repo):
    from claude_mem.mcp_server import answers

    session = add_session(conn, "s-mcp", repo, stamp(1))
    add_observation(conn, repo, "Flaky login test fixed with a retry", session_id=session, created_at=stamp(0.5))
    auto_memory.sync(conn, repo)
    text = answers.search_text(conn, repo, "staging deploy login")
    assert "auto-memory:deploy_staging.md" in text and "get_observations(ids=[" in text
    assert "full text with the Read tool: " in text and str(memory / "deploy_staging.md") in text
    only = answers.search_text(conn, repo, "staging deploy login", kinds=["auto-memory"])
    assert "auto-memory:deploy_staging.md" in only and "Flaky login" not in only
    # the tool's schema offers the kind (the stdlib server validates against the same catalog)
    from claude_mem.mcp_server.stdio import load_catalog

    search_tool = next(tool for tool in load_catalog()["tools"] if tool["name"] == "search")
    assert "auto-memory" in json.dumps(search_tool["inputSchema"]["properties"]["kinds"])


# -- never repeated at session start; status and doctor -----------------------------------------------------


def test_session_start_leaves_out_what_memory_md_already_loads(conn, memory, repo, data_dir):
    session = add_session(conn, "s-ctx", repo, stamp(3))
    stated = add_observation(conn, repo, "Login tests are flaky under parallel load", session_id=session,
                             created_at=stamp(2))
    other = add_observation(conn, repo, "Switched the cache to an LRU of 512 entries", session_id=session,
                            created_at=stamp(1))
    before = context.build(conn, repo, data_dir=str(data_dir))
    assert stated in before["ids"] and other in before["ids"]
    auto_memory.sync(conn, repo)
    after = context.build(conn, repo, data_dir=str(data_dir))
    assert after["ids"] == [other] and "Login tests" not in after["text"]
    assert "deploy_staging" not in after["text"]  # a note never appears in our index


def test_status_json_and_doctor_say_where_it_is_and_what_each_memory_injects(data_dir, memory, repo):
    run("search", "staging")  # indexes the notes
    found = json.loads(run("status", "--json").output)["auto_memory"]
    assert (found["enabled"], found["directory"], found["indexed"]) == (True, str(memory), 2)
    assert found["tokens"]["auto_memory"] == (len(files.loaded_part((memory / "MEMORY.md").read_text())) + 3) // 4
    assert found["tokens"]["claude_mem"] > 0
    assert "Claude Code auto memory on" in run("status").output
    checks = [check for check in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
              if check["name"] == "auto memory"]
    assert checks[0]["status"] == "info" and "2 file(s) indexed" in checks[0]["detail"]


def test_doctor_warns_of_a_bad_setting_and_status_says_off(data_dir, memory, repo, claude_home, monkeypatch):
    (claude_home / "settings.json").write_text(json.dumps({"autoMemoryDirectory": ["a", "list"],
                                                           "autoMemoryEnabled": False}))
    checks = [check for check in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
              if check["name"] == "auto memory"]
    assert "off (autoMemoryEnabled is false in user settings" in checks[0]["detail"]
    assert checks[1]["status"] == "warning" and "autoMemoryDirectory is not a string" in checks[1]["detail"]
    found = json.loads(run("status", "--json").output)["auto_memory"]
    assert found["enabled"] is False and found["tokens"]["auto_memory"] == 0


def test_the_viewer_search_shows_a_note_labelled_auto_memory(served, open_page, data_dir, memory, repo):
    from test_observer_worker import wait_for

    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "s-viewer", repo, stamp(2))
    add_observation(conn, repo, "Staging deploy script retries twice", session_id=session, created_at=stamp(1))
    auto_memory.sync(conn, repo)
    conn.close()
    page = open_page(served.start().url).page
    page.wait_for_selector("#feed .card")  # the feed has loaded: the app listens to the search box
    page.fill("#search", "staging deploy")
    wait_for(lambda: page.locator('#feed .card[data-key^="auto-memory:"]').count() == 2, 10, "the notes among the results")
    note = page.locator('#feed .card[data-ref="auto-memory:deploy_staging.md"]')
    assert note.locator(".tag").text_content() == "auto-memory"
    assert "auto-memory:deploy_staging.md" in note.locator(".ref").text_content()
    assert page.locator('#feed .card[data-key^="observation:"]').count() == 1
    note.locator(".card-head").click()
    assert "Claude Code's own auto memory" in note.locator(".details").inner_text()


def test_the_benchmark_really_runs_and_its_figures_are_sane():
    from bench import bench_auto_memory

    figures = bench_auto_memory.main(["--quick"])
    assert figures["notes"] == bench_auto_memory.NOTES and figures["observations"] == 1_000
    shown = figures["rows_injected"]
    assert shown["with_notes"] < shown["without_notes"]  # MEMORY.md states some index titles: they are left out
    assert all(value["cpu_ms"] > 0 for value in figures["session_start"].values())
    assert figures["unchanged_look_us"] > 0 and figures["cli_search_ms"]["with_notes"] > 0


def test_a_hybrid_search_with_the_real_model_merges_notes_beside_its_best_word_match(conn, memory, repo):
    from claude_mem.index import embedder, semantic
    from conftest import require

    require(embedder.unavailable() is None, f"the embedding model cannot run here: {embedder.unavailable()}")
    session = add_session(conn, "s-hybrid", repo, stamp(3))
    for n, title in enumerate(("Staging deploy script retries twice on timeout",
                               "Renamed the billing worker queue", "Cache eviction uses an LRU")):
        add_observation(conn, repo, title, session_id=session, created_at=stamp(2 - n / 10))
    while semantic.embed_missing(conn, 16):
        pass
    auto_memory.sync(conn, repo)
    found = search(conn, SearchQuery.build("staging deploy", kinds=("observation", "auto-memory"), project=repo))
    assert found.mode == "hybrid"
    kinds = [(hit["kind"], hit["score"]) for hit in found.items]
    notes_found = [score for kind, score in kinds if kind == "auto-memory"]
    assert max(notes_found) == notes.KEYWORD_SHARE  # the best note scores as the best word match does
    assert [hit["score"] for hit in found.items] == sorted((hit["score"] for hit in found.items), reverse=True)
    assert found.items[0]["title"].startswith("Staging deploy")


def test_with_auto_memory_off_the_session_start_index_keeps_everything(conn, memory, repo, data_dir, claude_home,
                                                                         monkeypatch):
    session = add_session(conn, "s-off", repo, stamp(3))
    stated = add_observation(conn, repo, "Login tests are flaky under parallel load", session_id=session,
                             created_at=stamp(2))
    auto_memory.sync(conn, repo)
    assert stated not in context.build(conn, repo, data_dir=str(data_dir))["ids"]
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")  # this session loads no MEMORY.md
    assert stated in context.build(conn, repo, data_dir=str(data_dir))["ids"]
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    (claude_home / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    assert auto_memory.sync(conn, repo)["enabled"] is False  # the notes stay searchable, MEMORY.md is not loaded
    assert stated in context.build(conn, repo, data_dir=str(data_dir))["ids"]


def test_forgetting_the_project_forgets_our_copy_of_its_notes(data_dir, memory, repo):
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "s-forget", repo, stamp(1))
    add_observation(conn, repo, "Anything at all to make the project known", session_id=session, created_at=stamp(0.5))
    auto_memory.sync(conn, repo)
    conn.close()
    run("forget", "--project", repo, "--yes")
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        assert repository.counts(conn) == 0 and repository.last_sync(conn, repo) is None
        assert search(conn, SearchQuery.build("staging deploy", kinds=("auto-memory",))).items == []
    finally:
        conn.close()
    assert (memory / "deploy_staging.md").exists()  # Claude Code's own file is never touched
    assert b"vault" not in open(db.db_path(str(data_dir)), "rb").read()


def test_a_search_with_a_damaged_note_says_so_in_one_line_and_finds_the_rest(data_dir, memory, repo):
    (memory / "broken.md").write_bytes(b"---\nname: Broken\n\xff\xfe not closed kiosk\n")
    (memory / "other.md").write_bytes(b"caf\xe9 kiosk notes\n")
    result = CliRunner().invoke(cli, ["search", "kiosk", "--json"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    found = json.loads(result.stdout)
    assert {hit["ref"] for hit in found["items"]} == {"auto-memory:broken.md", "auto-memory:other.md"}
    lines = [line for line in result.stderr.splitlines() if line.startswith("auto memory:")]
    assert len(lines) == 1 and "not valid UTF-8" in lines[0] and "1 more: `claude-mem doctor` lists them" in lines[0]


def test_an_auto_memory_directory_that_points_nowhere_is_said_and_search_still_works(data_dir, repo, claude_home,
                                                                                       tmp_path):
    nowhere = tmp_path / "no" / "such" / "dir"
    (claude_home / "settings.json").write_text(json.dumps({"autoMemoryDirectory": str(nowhere)}))
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "s-nowhere", repo, stamp(1))
    add_observation(conn, repo, "Kiosk mode needs a fullscreen flag", session_id=session, created_at=stamp(0.5))
    conn.close()
    found = json.loads(run("search", "kiosk", "--json").output)
    assert [hit["kind"] for hit in found["items"]] == ["observation"]
    status = json.loads(run("status", "--json").output)["auto_memory"]
    assert (status["directory"], status["exists"], status["indexed"]) == (str(nowhere), False, 0)
    assert f"{nowhere} (not created yet)" in run("status").output.replace("\n", "")


# -- against the real Claude Code CLI ---------------------------------------------------------------------

# Each case: (user settings, project settings, local settings, environment); the CLI's system prompt names
# the directory it uses ("… memory system at `DIR/`"), or has no auto memory section when it is off.
REAL_CASES = {
    "default": ({}, {}, {}, {}),
    "user setting, ~/": ({"autoMemoryDirectory": "~/user-notes"}, {}, {}, {}),
    "project setting": ({"autoMemoryDirectory": "~/user-notes"}, {"autoMemoryDirectory": "/tmp/am-project-notes"}, {}, {}),
    "local setting": ({}, {"autoMemoryDirectory": "/tmp/am-project-notes"}, {"autoMemoryDirectory": "/tmp/am-local-notes"}, {}),
    "not a string": ({"autoMemoryDirectory": 42}, {}, {}, {}),
    "relative": ({"autoMemoryDirectory": "relative/notes"}, {}, {}, {}),
    "off by setting": ({"autoMemoryEnabled": False}, {}, {}, {}),
    "off by environment": ({}, {}, {}, {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}),
}


def _announced(bodies: list[str]) -> set[str]:
    import re

    text = " ".join(bodies)
    return set(re.findall(r"memory system at `([^`]*)`", text)) | set(re.findall(r"memory at `([^`]*)`", text))


def test_the_locator_agrees_with_the_real_claude_code_cli(tmp_path):
    from claude_support import run_claude
    from fakes.anthropic_api import FakeAnthropic

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    project = tmp_path / "work" / "my_repo.v2"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    for name, (user, shared, local, extra) in REAL_CASES.items():
        for path, data in ((home / ".claude" / "settings.json", user), (project / ".claude" / "settings.json", shared),
                           (project / ".claude" / "settings.local.json", local)):
            path.write_text(json.dumps(data))
        with FakeAnthropic() as fake:
            done = run_claude("hello there", fake.url, str(project), str(home), extra, plugin_dir=None)
            bodies = [json.dumps(request.body) for request in fake.posts("/v1/messages")]
        assert done.returncode == 0, (name, done.stderr[-1000:])
        ours = files.locate(str(project), {"HOME": str(home), **extra})
        theirs = _announced(bodies)
        assert ours.enabled == bool(theirs), name
        if theirs:
            assert theirs == {ours.directory + os.sep}, name


class NoteWriter:
    """The fake model saves an auto memory note where Claude Code's system prompt says its memory is."""

    @staticmethod
    def make():
        from fakes.anthropic_api import FakeAnthropic

        class Fake(FakeAnthropic):
            def answer(self, body):
                directory = next(iter(_announced([json.dumps(body)])), None)
                wrote = "tool_result" in json.dumps(body.get("messages"))
                if directory and body.get("tools") and not wrote:
                    note = ("---\nname: Release checklist\ndescription: what a release needs\ntype: project\n---\n"
                            "Bump the version, tag it, and publish the wheel to the internal index.\n")
                    block = {"type": "tool_use", "id": "toolu_note000001", "name": "Write",
                             "input": {"file_path": directory + "project_release.md", "content": note}}
                    return "", [block], "tool_use"
                return super().answer(body)

        return Fake()


def test_a_note_the_real_cli_saves_is_found_by_claude_mem_search(tmp_path, data_dir):
    from claude_support import run_claude

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    with NoteWriter.make() as fake:
        done = run_claude("remember how we release", fake.url, str(project), str(home), plugin_dir=None)
    assert done.returncode == 0, done.stderr[-1000:]
    written = files.locate(str(project), {"HOME": str(home)}).directory
    assert os.path.exists(os.path.join(written, "project_release.md"))  # Claude Code itself wrote it there
    searched = subprocess.run([sys.executable, "-m", "claude_mem", "search", "publish the wheel", "--json"],
                              cwd=project, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)})
    assert searched.returncode == 0, searched.stderr
    hits = json.loads(searched.stdout)["items"]
    # Claude Code 2.1.332 rewrote the front matter: the name as a slug (so the description titles the hit),
    # the type nested under `metadata:`
    assert [(hit["ref"], hit["title"], hit["subtitle"], hit["type"]) for hit in hits] == [
        ("auto-memory:project_release.md", "what a release needs", "release-checklist", "project")]
