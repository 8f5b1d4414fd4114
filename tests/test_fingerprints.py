"""Code fingerprints at capture (issue 26): `capture.fingerprint` in real git repositories, the hook
writing them into the event, observations inheriting them, and `remember --file`."""

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from claude_mem import settings as settings_module
from claude_mem.capture import fingerprint
from claude_mem.cli import cli
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.offline import OfflineProvider
from claude_mem.store import fingerprints as store_fingerprints
from claude_mem.store.models import Batch, ParsedObservation, PendingEvent
from claude_mem.store.results import _batch_files, _files_of
from conftest import REPO, require_executable
from hook_support import PAYLOADS, events, rows, run_hook
from observer_support import connect, drain
from test_hooks_imports import FORBIDDEN, PROBE

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd, *args: str) -> str:
    require_executable("git")
    result = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=str(cwd), capture_output=True,
                            text=True, env={**os.environ, **GIT_ENV}, timeout=60, check=True)
    return result.stdout.strip()


def write(path, data: bytes | str) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    return str(path)


@pytest.fixture
def repo(tmp_path):
    """A git repository with one commit: `src/auth.py` and `README.md`."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root / "src" / "auth.py", "def refresh():\n    return 'token'\n")
    write(root / "README.md", "# repo\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def one(path, base, start=None):
    files, commit = fingerprint.fingerprints([str(path)], str(base), str(start) if start else None)
    return files, commit


# -- the fingerprint of one file -----------------------------------------------------------------------


def test_fingerprint_in_a_repo_matches_git(repo):
    files, commit = one(repo / "src" / "auth.py", repo)
    assert commit == git(repo, "rev-parse", "HEAD")
    [item] = files
    info = os.stat(repo / "src" / "auth.py")
    assert item == {"path": "src/auth.py", "size": info.st_size, "mtime_ns": info.st_mtime_ns,
                    "hash": git(repo, "hash-object", "src/auth.py"), "commit": commit}


def test_blob_hash_is_git_hash_object(repo):
    for name, data in (("empty", b""), ("nul", b"a\0b\n" * 300), ("utf8", "héllo ✓\n".encode()),
                       ("binary", bytes(range(256)) * 40)):
        path = write(repo / name, data)
        assert fingerprint.blob_hash(data) == git(repo, "hash-object", path)
    assert fingerprint.blob_hash(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_relative_paths_from_a_subdirectory_are_relative_to_the_root(repo):
    files, _ = fingerprint.fingerprints(["auth.py", "../README.md", "./auth.py"], str(repo / "src"))
    assert [item["path"] for item in files] == ["src/auth.py", "README.md"]  # the same file counted once


def test_packed_refs_and_a_detached_head(repo):
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "pack-refs", "--all")
    assert not os.path.exists(repo / ".git" / "refs" / "heads" / "main")
    assert one(repo / "README.md", repo)[1] == head
    write(repo / "README.md", "# second\n")
    git(repo, "commit", "-qam", "second")
    second = git(repo, "rev-parse", "HEAD")
    assert second != head and one(repo / "README.md", repo)[1] == second  # the loose ref wins over packed
    git(repo, "checkout", "-q", "--detach", head)
    files, commit = one(repo / "README.md", repo)
    assert commit == head and files[0]["hash"] == git(repo, "hash-object", "README.md")


def test_a_linked_worktree_has_its_own_root_and_head(repo, tmp_path):
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tree))
    assert os.path.isfile(tree / ".git")
    write(tree / "src" / "auth.py", "def refresh():\n    return 'new token'\n")
    git(tree, "commit", "-qam", "in the worktree")
    files, commit = one(tree / "src" / "auth.py", tree / "src")
    assert commit == git(tree, "rev-parse", "HEAD") != git(repo, "rev-parse", "HEAD")
    assert files[0]["path"] == "src/auth.py" and files[0]["hash"] == git(tree, "hash-object", "src/auth.py")
    git(repo, "pack-refs", "--all")  # the worktree's branch now only in the shared packed-refs
    assert one(tree / "src" / "auth.py", tree)[1] == commit


def test_a_repository_without_commits_and_a_directory_outside_git(tmp_path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    write(fresh / "a.txt", "a\n")
    files, commit = one(fresh / "a.txt", fresh)
    assert commit is None and files[0]["path"] == "a.txt" and files[0]["hash"] == fingerprint.blob_hash(b"a\n")
    plain = tmp_path / "plain"
    write(plain / "lib" / "b.txt", "b\n")
    files, commit = one(plain / "lib" / "b.txt", plain)
    assert commit is None and files[0]["path"] == "lib/b.txt" and files[0]["commit"] is None


def test_broken_git_files_give_no_commit(tmp_path):
    cases = {
        "gitfile-nowhere": lambda d: write(d / ".git", "gitdir: /nonexistent/x\n"),
        "gitfile-garbage": lambda d: write(d / ".git", "\0\xff nonsense"),
        "head-escapes": lambda d: write(d / ".git" / "HEAD", "ref: refs/../../../etc/passwd\n"),
        "head-garbage": lambda d: write(d / ".git" / "HEAD", "x" * 100_000),
        "head-loop": lambda d: (write(d / ".git" / "HEAD", "ref: refs/heads/a\n"),
                                write(d / ".git" / "refs" / "heads" / "a", "ref: refs/heads/a\n")),
    }
    for name, make in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        make(directory)
        write(directory / "f.txt", "f\n")
        files, commit = one(directory / "f.txt", directory)
        assert commit is None, name
        assert [item["path"] for item in files] == ["f.txt"], name


def test_big_file_is_not_hashed(repo):
    path = write(repo / "big.bin", b"x" * (fingerprint.HASH_MAX_BYTES + 1))
    [item] = one(path, repo)[0]
    assert item["hash"] is None and item["size"] == fingerprint.HASH_MAX_BYTES + 1 and item["mtime_ns"]
    path = write(repo / "edge.bin", b"y" * fingerprint.HASH_MAX_BYTES)
    assert one(path, repo)[0][0]["hash"] == git(repo, "hash-object", path)


def test_unreadable_file_keeps_size_and_mtime(repo, monkeypatch):
    path = str(repo / "src" / "auth.py")
    os.chmod(path, 0)
    real_open = os.open
    if os.geteuid() == 0:  # root reads anything: refuse it the way the kernel would for a user
        def refusing(name, *args, **kwargs):
            if os.path.realpath(name) == os.path.realpath(path):
                raise PermissionError(13, "Permission denied", name)
            return real_open(name, *args, **kwargs)
        monkeypatch.setattr(os, "open", refusing)
    try:
        [item] = one(path, repo)[0]
    finally:
        os.chmod(path, 0o644)
    assert item["path"] == "src/auth.py" and item["hash"] is None and item["size"] == os.stat(path).st_size


def test_directories_fifos_missing_files_and_the_root_itself_record_nothing(repo):
    os.mkfifo(repo / "pipe")
    started = time.monotonic()
    files, commit = fingerprint.fingerprints(
        [str(repo / "src"), str(repo / "pipe"), str(repo / "missing.py"), str(repo), "", "a\0b", "x" * 10_000],
        str(repo))
    assert files == [] and commit == git(repo, "rev-parse", "HEAD")
    assert time.monotonic() - started < 1  # the FIFO was not waited on


def test_files_outside_the_root_and_symlinks(repo, tmp_path):
    outside = write(tmp_path / "secret.txt", "not the project's\n")
    os.symlink(outside, repo / "link-out")
    os.symlink(repo / "src" / "auth.py", repo / "link-in")
    os.symlink("src", repo / "srclink")
    files, _ = fingerprint.fingerprints(
        [outside, str(repo / "link-out"), str(repo / ".." / "secret.txt"), str(repo / "link-in"),
         str(repo / "srclink" / "auth.py"), "/etc/hostname"], str(repo))
    expected_hash = git(repo, "hash-object", "src/auth.py")
    assert [(item["path"], item["hash"]) for item in files] == [("link-in", expected_hash),
                                                                 ("srclink/auth.py", expected_hash)]
    # the root named through a symlink: paths are still relative to it
    os.symlink(repo, tmp_path / "alias")
    files, _ = one(tmp_path / "alias" / "src" / "auth.py", tmp_path / "alias")
    assert files[0]["path"] == "src/auth.py"


def test_ten_thousand_paths_are_capped_and_fast(repo):
    for index in range(30):
        write(repo / "many" / f"f{index}.txt", f"{index}\n")
    paths = [str(repo / "many" / f"f{index % 30}.txt") for index in range(10_000)]
    paths += [str(repo / "many" / f"f{index}.txt") for index in range(10_000)]  # mostly missing
    started = time.monotonic()
    files, _ = fingerprint.fingerprints(paths, str(repo))
    assert time.monotonic() - started < 1
    assert len(files) == fingerprint.MAX_FILES_PER_EVENT == 20
    assert len({item["path"] for item in files}) == 20


def test_for_event_takes_the_tools_that_name_files(repo):
    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    cwd = str(repo / "src")
    for tool, field in fingerprint.FILE_TOOLS.items():
        found = fingerprint.for_event({"tool_name": tool, "tool_input": {field: "auth.py"}, "cwd": cwd}, env)
        assert found is not None and found["files"][0]["path"] == "src/auth.py", tool
        assert found["commit"] == git(repo, "rev-parse", "HEAD")
    hostile = [{"tool_name": "Bash", "tool_input": {"command": "cat auth.py"}, "cwd": cwd},
               {"tool_name": "Read", "tool_input": {"file_path": ["auth.py"]}, "cwd": cwd},
               {"tool_name": "Read", "tool_input": "auth.py", "cwd": cwd},
               {"tool_name": ["Read"], "tool_input": {"file_path": "auth.py"}},
               {"tool_name": "Read", "tool_input": {"file_path": "a" * 1_000_000}, "cwd": cwd},
               {"tool_name": "Read", "tool_input": {"file_path": "auth.py\0"}, "cwd": cwd},
               {"tool_name": "Read", "tool_input": {"file_path": "auth.py"}, "cwd": 12},
               {"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}, "cwd": cwd}]
    for payload in hostile:
        assert fingerprint.for_event(payload, env) is None, payload
    assert fingerprint.for_event({"tool_name": "Read", "tool_input": {"file_path": "auth.py"}, "cwd": cwd},
                                 {"CLAUDE_PROJECT_DIR": 5}) is not None  # a bad env value: the cwd's root


# -- observations inherit the batch's fingerprints -------------------------------------------------------


def fp(path: str, digest: str) -> dict:
    return {"path": path, "size": 1, "mtime_ns": 1, "hash": digest, "commit": None}


def test_observation_files_by_name_latest_wins():
    events = tuple(PendingEvent(id=index, session_id=1, kind="tool", prompt_number=1, payload=payload)
                   for index, payload in enumerate([
                       {"files": [fp("src/auth.py", "old"), fp("README.md", "r")]},
                       {"files": "not a list"}, {"files": [None, {"path": 3}, {"path": ""}]},
                       {"files": [fp("src/auth.py", "new")]}, {}]))
    batch = Batch(session_id=1, content_session_id="s", project="/p", cwd="/p", events=events, lease="x")
    files = _batch_files(batch)
    assert {path: item["hash"] for path, item in files.items()} == {"src/auth.py": "new", "README.md": "r"}

    def inherited(**named):
        return sorted((item["path"], item["hash"]) for item in _files_of(ParsedObservation("change", "t", "n", **named),
                                                                         files))
    assert inherited() == [("README.md", "r"), ("src/auth.py", "new")]  # names none: all of them
    assert inherited(files_modified=("/home/dev/proj/src/auth.py",)) == [("src/auth.py", "new")]
    assert inherited(files_read=("auth.py",)) == [("src/auth.py", "new")]
    assert inherited(files_read=("./README.md",)) == [("README.md", "r")]
    assert inherited(files_read=("uth.py", "other.py")) == []  # names files, none of these: nothing


# -- end to end: the real hook command, the observer, observation_files --------------------------------------


def session_payloads(project: str) -> list[dict]:
    found = []
    folder = os.path.join(PAYLOADS, "session-edit")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            found.append(json.loads(handle.read().replace("/home/dev/proj", project)))
    return found


def test_hook_records_fingerprints_and_observations_inherit_them(data_dir, repo):
    project = str(repo)
    env = {"CLAUDE_PROJECT_DIR": project}
    payloads = session_payloads(project)
    hooks = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PostToolUse": "post-tool",
             "Stop": "stop", "SessionEnd": "session-end"}
    contents = {"Write": "hello from fake model\nsecond line\n", "Edit": "goodbye from fake model\nsecond line\n"}
    for payload in payloads:
        tool = payload.get("tool_name")
        if tool in contents:  # the tool ran before PostToolUse: the file is as it left it
            write(repo / "hello.txt", contents[tool])
        result = run_hook(hooks[payload["hook_event_name"]], payload, env)
        assert result.returncode == 0 and result.stderr == b"", result.stderr
    head = git(repo, "rev-parse", "HEAD")
    tools = [event["payload"] for event in events(data_dir) if event["kind"] == "tool"]
    by_tool = {item["tool_name"]: item for item in tools}
    assert "files" not in by_tool["Bash"]
    write_print, edit_print = by_tool["Write"]["files"], by_tool["Edit"]["files"]
    assert write_print[0]["hash"] == fingerprint.blob_hash(contents["Write"].encode())  # after the tool ran
    assert edit_print[0]["hash"] == git(repo, "hash-object", "hello.txt")
    assert by_tool["Read"]["files"] == edit_print and by_tool["Read"]["commit"] == head
    assert edit_print[0]["path"] == "hello.txt" and edit_print[0]["commit"] == head

    conn = connect(data_dir)
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "provider": "offline"})
    asyncio.run(drain(Pipeline(conn, values, OfflineProvider())))
    observations = conn.execute("SELECT id, files_modified FROM observations").fetchall()
    assert observations and any("hello.txt" in modified for _id, modified in observations)
    recorded = rows(data_dir, "SELECT observation_id, path, size, hash, commit_sha FROM observation_files")
    assert recorded
    assert {row[0] for row in recorded} == {observation_id for observation_id, _ in observations}
    for _observation_id, path, size, digest, commit in recorded:
        assert (path, size, digest, commit) == ("hello.txt", len(contents["Edit"]), edit_print[0]["hash"], head)
    prints = store_fingerprints.of(conn, [observation_id for observation_id, _ in observations])
    assert [item["path"] for items in prints.values() for item in items] == ["hello.txt"] * len(recorded)
    conn.close()


def test_a_fingerprint_failure_never_loses_the_event(data_dir, repo, monkeypatch):
    from claude_mem.hooks import runner

    def broken(incoming, env):
        raise RuntimeError("boom")
    monkeypatch.setattr(fingerprint, "for_event", broken)
    payload = session_payloads(str(repo))[4]  # the Read
    assert runner.handle("post-tool", json.dumps(payload).encode(), {}) == 0
    [event] = events(data_dir)
    assert event["payload"]["tool_name"] == "Read" and "files" not in event["payload"]


def test_post_tool_hook_with_fingerprints_loads_nothing_heavy(data_dir, repo, tmp_path):
    payload = session_payloads(str(repo))[4]
    payload["tool_input"]["file_path"] = str(repo / "src" / "auth.py")
    path = write(tmp_path / "read.json", json.dumps(payload))
    env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false"}
    result = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, REPO, json.dumps([["post-tool", path]])],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.splitlines()[-1])["after_calls"])
    assert "claude_mem.capture.fingerprint" in loaded and sorted(loaded & set(FORBIDDEN)) == []
    [event] = events(data_dir)
    assert event["payload"]["files"][0]["path"] == "src/auth.py"


# -- remember --file ---------------------------------------------------------------------------------------------


def test_remember_file_records_its_fingerprints(data_dir, repo, monkeypatch):
    monkeypatch.chdir(repo / "src")
    runner = CliRunner()
    result = runner.invoke(cli, ["remember", "auth.py refreshes the token before the request", "--file", "auth.py",
                                 "--file", "../README.md", "--file", "auth.py", "--json"])
    assert result.exit_code == 0, result.output
    stored = json.loads(result.stdout)
    recorded = rows(data_dir, "SELECT observation_id, path, hash, commit_sha FROM observation_files ORDER BY path")
    head = git(repo, "rev-parse", "HEAD")
    assert recorded == [(stored["id"], "README.md", git(repo, "hash-object", "README.md"), head),
                        (stored["id"], "src/auth.py", git(repo, "hash-object", "src/auth.py"), head)]
    for bad in ("missing.py", "/etc/hostname", "."):
        result = runner.invoke(cli, ["remember", "another note", "--file", bad])
        assert result.exit_code != 0 and "not a file inside the project" in result.output, result.output
        assert "Traceback" not in result.output
    many = [arg for index in range(fingerprint.MAX_FILES_PER_EVENT + 1) for arg in ("--file", f"f{index}")]
    result = runner.invoke(cli, ["remember", "a note about many files", *many])
    assert result.exit_code != 0 and "too many files" in result.output and "Traceback" not in result.output
    assert len(rows(data_dir, "SELECT id FROM observations")) == 1  # a refused note is not stored
