"""Freshness at read time (issue 26): memory knows when the files it is about changed or went."""

import json
import os
import subprocess
import time

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.recall import context, freshness
from claude_mem.store import fingerprints
from mcp_support import connect, ok
from recall_seed import add_observation, add_session, stamp


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@e"}).stdout.strip()


def fingerprint(root, path: str) -> dict:
    full = os.path.join(root, path)
    info = os.stat(full)
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, text=True)
    head = done.stdout.strip() if done.returncode == 0 else None
    return {"path": path, "size": info.st_size, "mtime_ns": info.st_mtime_ns,
            "hash": freshness.blob_hash(full, info.st_size), "commit": head or None}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "app"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 2\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    monkeypatch.chdir(root)
    return str(root)


def remember(data_dir, root: str, title: str, paths: tuple[str, ...]) -> int:
    from claude_mem import store
    store.open(str(data_dir)).close()  # migrated
    conn = connect(data_dir)
    try:
        session = add_session(conn, "s-fresh", root, stamp(5)) if not conn.execute(
            "SELECT 1 FROM sessions WHERE content_session_id = 's-fresh'").fetchone() else 1
        obs = add_observation(conn, root, title, session_id=session, created_at=stamp(1))
        fingerprints.add(conn, obs, [fingerprint(root, path) for path in paths])
        conn.commit()
    finally:
        conn.close()
    return obs


def search_json(query: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["search", query, "--json", "--mode", "keyword"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["items"]


def session_text(data_dir, root: str, **values) -> str:
    from claude_mem import settings, store
    with store.open(str(data_dir), readonly=True) as conn:
        return context.build(conn, root, values={**settings.load(), **values}, data_dir=str(data_dir))["text"]


def test_current_then_changed_then_deleted_on_every_surface(data_dir, repo):
    obs = remember(data_dir, repo, "Parser config lives in widget module", ("a.py", "b.py"))
    [hit] = search_json("widget")
    assert hit["freshness"] == "current" and hit["changed_files"] == []
    assert "(changed" not in session_text(data_dir, repo)

    time.sleep(0.01)
    with open(os.path.join(repo, "a.py"), "w") as handle:
        handle.write("x = 42  # changed\n")
    git(repo, "commit", "-qam", "change a")
    [hit] = search_json("widget")
    assert hit["freshness"] == "changed" and hit["changed_files"] == ["a.py"]
    assert hit["changed_commits"]["a.py"] == [git(repo, "log", "-1", "--format=%h")]
    assert f"#{obs}" in session_text(data_dir, repo) and "(changed: a.py)" in session_text(data_dir, repo)
    answer = ok("search", {"query": "widget"})
    assert "(changed: a.py)" in answer
    shown = ok("get_observations", {"ids": [obs]})
    assert "freshness: changed — a.py (since: " in shown
    shown_json = json.loads(CliRunner().invoke(cli, ["show", str(obs), "--json"]).output)
    assert shown_json[0]["freshness"] == "changed"

    os.remove(os.path.join(repo, "b.py"))
    os.remove(os.path.join(repo, "a.py"))
    [hit] = search_json("widget")
    assert hit["freshness"] == "deleted" and hit["changed_files"] == ["a.py", "b.py"]
    assert "(deleted: a.py, b.py)" in session_text(data_dir, repo)


def test_stale_memory_setting(data_dir, repo):
    fresh = remember(data_dir, repo, "Fresh note about b module", ("b.py",))
    stale = remember(data_dir, repo, "Stale note about a module", ("a.py",))
    with open(os.path.join(repo, "a.py"), "a") as handle:
        handle.write("more = 1\n")
    marked = session_text(data_dir, repo)
    assert f"#{stale}" in marked and "(changed: a.py)" in marked and f"#{fresh}" in marked
    hidden = session_text(data_dir, repo, stale_memory="hide")
    assert f"#{stale} " not in hidden and f"#{fresh}" in hidden
    shown = session_text(data_dir, repo, stale_memory="show")
    assert f"#{stale}" in shown and "(changed" not in shown
    result = CliRunner().invoke(cli, ["settings", "set", "stale_memory", "sometimes"])
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_prompt_memory_marks_and_hides(data_dir, repo):
    from claude_mem.recall import prompt_context
    obs = remember(data_dir, repo, "Quokka telemetry pipeline batches uploads", ("a.py",))
    remember(data_dir, repo, "Unrelated filler one", ())
    remember(data_dir, repo, "Unrelated filler two", ())
    with open(os.path.join(repo, "a.py"), "a") as handle:
        handle.write("z = 3\n")
    payload = {"prompt": "quokka telemetry uploads", "cwd": repo, "session_id": "", "project": repo}
    base = {"prompt_context": True, "prompt_context_results": 3, "prompt_context_tokens": 300,
            "prompt_context_timeout_ms": 0}
    marked = prompt_context.user_prompt(payload, str(data_dir), {**base, "stale_memory": "mark"})
    assert marked is not None
    text = marked["hookSpecificOutput"]["additionalContext"]
    assert f"#{obs}" in text and "(changed: a.py)" in text
    assert prompt_context.user_prompt(payload, str(data_dir), {**base, "stale_memory": "hide"}) is None


def test_bad_inputs_are_unknown_or_named(tmp_path, repo):
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, os.path.join(repo, "link.txt"))
    os.mkdir(os.path.join(repo, "dir.py"))
    os.symlink(tmp_path, os.path.join(repo, "escape"))  # a directory symlink out of the checkout
    locked = os.path.join(repo, "locked.py")
    with open(locked, "w") as handle:
        handle.write("q = 1\n")
    record = fingerprint(repo, "locked.py")
    os.chmod(locked, 0)
    cases = {
        "../secret.txt": "unknown", "/etc/passwd": "unknown", "link.txt": "unknown", "a\0b": "unknown", "": "unknown",
        "escape/secret.txt": "unknown", "sub/../../secret.txt": "unknown",
    }
    for path, expected in cases.items():
        state = freshness.assess([{"path": path, "size": 1, "mtime_ns": 1, "hash": "0" * 40, "commit": None}], repo)
        assert state["freshness"] == expected, path
    became_dir = freshness.assess([{"path": "dir.py", "size": 5, "mtime_ns": 1, "hash": "0" * 40, "commit": None}], repo)
    assert became_dir == {"freshness": "changed", "changed_files": ["dir.py"]}
    if os.geteuid() != 0:  # root reads anything
        os.utime(locked, ns=(1, 1))
        assert freshness.assess([record], repo)["freshness"] == "unknown"
    os.chmod(locked, 0o644)
    # not a git checkout, no root, no files
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x")
    assert freshness.assess([fingerprint(plain, "a.py")], str(plain))["freshness"] == "unknown"
    assert freshness.assess([fingerprint(repo, "a.py")], None)["freshness"] == "unknown"
    assert freshness.assess([], repo)["freshness"] == "unknown"
    # bogus recorded commit, detached HEAD: git says nothing, never raises
    assert freshness.commits_since(repo, "zzzz; rm -rf /", "a.py") == []
    assert freshness.commits_since(repo, "0" * 40, "a.py") == []
    git(repo, "checkout", "-q", "--detach")
    with open(os.path.join(repo, "a.py"), "a") as handle:
        handle.write("w = 1\n")
    record = {**fingerprint(repo, "b.py"), "path": "a.py", "size": 6}
    assert freshness.assess([record], repo, commits=True)["freshness"] == "changed"


def test_repo_without_commits(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("x = 1\n")
    record = fingerprint(root, "a.py")
    assert record["commit"] is None
    assert freshness.assess([record], str(root), commits=True)["freshness"] == "current"
    (root / "a.py").write_text("x = 22\n")
    assert freshness.assess([record], str(root), commits=True) == {
        "freshness": "changed", "changed_files": ["a.py"], "changed_commits": {}}


def test_ten_thousand_files_stay_bounded(repo):
    records = [{"path": f"gone/{n}.py", "size": 1, "mtime_ns": 1, "hash": "0" * 40, "commit": None}
               for n in range(10_000)]
    started = time.monotonic()
    result = freshness.assess(records, repo, freshness.Budget(files=500))
    assert time.monotonic() - started < 1.0
    assert result["freshness"] == "deleted" and len(result["changed_files"]) == 500


def test_cache_avoids_rehashing_an_unchanged_file(repo):
    record, untouched = fingerprint(repo, "a.py"), fingerprint(repo, "b.py")
    os.utime(os.path.join(repo, "a.py"), ns=(10**18, 10**18))  # mtime moved, content the same
    before = freshness.hash_reads
    assert freshness.assess([record], repo)["freshness"] == "current"
    assert freshness.hash_reads == before + 1
    for _ in range(5):
        assert freshness.assess([record], repo)["freshness"] == "current"
    assert freshness.hash_reads == before + 1
    assert freshness.assess([untouched], repo)["freshness"] == "current"
    assert freshness.hash_reads == before + 1  # same size and mtime: stat only


def test_blob_hash_is_gits(repo):
    path = os.path.join(repo, "a.py")
    assert freshness.blob_hash(path, os.path.getsize(path)) == git(repo, "hash-object", "a.py")


def test_bench_reports_both_ratios_from_one_run(monkeypatch):
    from bench import bench_freshness
    monkeypatch.setattr(bench_freshness, "SHOWN", 10)
    report = bench_freshness.main(["--quick", "--json"])
    for name in ("session_start", "search"):
        assert report[name]["on_p50_ms"] > 0 and report[name]["off_p50_ms"] > 0 and report[name]["ratio"] > 0
    assert report["session_start"]["rows_marked"] > 0 and report["session_start"]["rows_marked_off"] == 0


def test_worker_api_carries_freshness(data_dir, repo):
    from starlette.testclient import TestClient

    from claude_mem.worker.app import create_app
    from test_worker_app import BASE, make_ctx
    obs = remember(data_dir, repo, "Gizmo cache eviction uses LRU", ("a.py",))
    with open(os.path.join(repo, "a.py"), "a") as handle:
        handle.write("evict = 'lru'\n")
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as client:
        [hit] = client.get("/api/search", params={"q": "gizmo", "mode": "keyword"}).json()["items"]
        assert (hit["id"], hit["freshness"], hit["changed_files"]) == (obs, "changed", ["a.py"])
        listed = client.get("/api/observations").json()["items"]
        assert [item["freshness"] for item in listed if item["id"] == obs] == ["changed"]
        around = client.get("/api/timeline", params={"anchor": str(obs)}).json()["items"]
        assert [item["freshness"] for item in around if item["id"] == obs and item["kind"] == "observation"] == ["changed"]
        shown = client.get(f"/api/observations/{obs}").json()
        assert shown["freshness"] == "changed"


def test_a_long_running_process_looks_at_a_file_at_most_once_a_second(tmp_path, monkeypatch):
    """The worker and the MCP server answer many searches: within `STATE_TTL` a file's state is reused,
    after it the file is looked at again."""
    monkeypatch.setattr(freshness, "STATE_TTL", 1.0)
    freshness._STATES.clear()
    root = tmp_path / "tree"
    root.mkdir()
    (root / ".git").mkdir()
    target = root / "a.py"
    target.write_text("x = 1\n")
    info = target.stat()
    recorded = {"path": "a.py", "size": info.st_size, "mtime_ns": info.st_mtime_ns,
                "hash": freshness.blob_hash(str(target), info.st_size), "commit": None}
    assert freshness.file_state(str(root), recorded, freshness.Budget())[0] == freshness.CURRENT
    target.unlink()
    assert freshness.file_state(str(root), recorded, freshness.Budget())[0] == freshness.CURRENT  # memo
    clock = freshness.time.monotonic() + 1.5
    monkeypatch.setattr(freshness.time, "monotonic", lambda: clock)
    assert freshness.file_state(str(root), recorded, freshness.Budget())[0] == freshness.DELETED
