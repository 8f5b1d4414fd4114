"""Team memory the way users run it: two real workers (two data dirs, two checkouts of one repository)
sharing a real PostgreSQL; notes made with the CLI on one are found with the CLI on the other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest

from claude_mem.runtime import control
from conftest import REPO, TESTS
from team_support import pg, team_url  # noqa: F401  (fixtures)
from test_worker_lifecycle import wait_for, worker_processes


def checkout(root, name: str, remote: str = "git@github.com:acme/app.git") -> str:
    path = os.path.join(str(root), name, "app")
    os.makedirs(os.path.join(path, ".git"))
    with open(os.path.join(path, ".git", "config"), "w") as handle:
        handle.write(f'[remote "origin"]\n\turl = {remote}\n')
    return path


def data_dir_for(root, name: str, url: str, **extra) -> str:
    directory = os.path.join(str(root), f"{name}-data")
    os.makedirs(directory)
    with open(os.path.join(directory, "settings.json"), "w") as handle:
        json.dump({"team_database_url": url, "team_projects": ["github.com/acme/*"], "team_author": name, **extra},
                  handle)
    return directory


def run(data_dir: str, cwd: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}
    result = subprocess.run([sys.executable, "-m", "claude_mem", *args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def workers(monkeypatch):
    """Environment for real workers; stops every worker started by the test."""
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "0")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")
    monkeypatch.setenv("PYTHONPATH", os.path.join(REPO, "src") + os.pathsep + TESTS)
    started: list[str] = []

    def start(data_dir: str) -> None:
        monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", data_dir)
        control.start(data_dir)
        started.append(data_dir)

    yield start
    for data_dir in started:
        control.stop(data_dir, timeout=20)
        for pid in worker_processes(data_dir):
            psutil.Process(pid).kill()


def test_two_workers_share_a_project_and_nothing_else(tmp_path, team_url, workers):
    alice_app, bob_app = checkout(tmp_path, "alice"), checkout(tmp_path, "bob", "https://github.com/Acme/app")
    elsewhere = checkout(tmp_path, "alice-private", "git@github.com:alice/diary.git")
    alice, bob = data_dir_for(tmp_path, "alice", team_url), data_dir_for(tmp_path, "bob", team_url)
    workers(alice)
    workers(bob)

    run(alice, alice_app, "remember", "Staging deploys need the VPN profile named ops-eu", "--type", "decision")
    run(alice, elsewhere, "remember", "My private diary note about the quarterly review")
    made = time.monotonic()

    def found_on_bob():
        result = run(bob, bob_app, "search", "staging deploys VPN", "--mode", "keyword", "--json")
        return json.loads(result.stdout)["items"]

    items = wait_for(found_on_bob, 30, "Alice's note on Bob's machine")
    lag = time.monotonic() - made
    assert items[0]["title"].startswith("Staging deploys need the VPN") and items[0]["author"] == "alice"
    assert lag < 15, lag
    context = run(bob, bob_app, "context").stdout
    assert "Staging deploys need the VPN" in context and "(by alice)" in context
    assert not json.loads(run(bob, bob_app, "search", "diary quarterly review", "--mode", "keyword", "--json",
                              "--project", "github.com/alice/diary", check=False).stdout or "{}").get("items")

    with urllib.request.urlopen(f"{control.state(bob).url}/api/team", timeout=10) as response:
        team = json.loads(response.read())
    assert team["enabled"] and team["connected"] and team["authors"] == [{"author": "alice", "observations": 1}]
    assert "pw-" not in json.dumps(team)

    status = json.loads(run(bob, bob_app, "team", "status", "--json").stdout)
    assert status["enabled"] and status["connected"] and status["pulled"] >= 1 and status["error"] is None
    assert status["server"].startswith("127.0.0.1:") and "pw-" not in json.dumps(status)

    # and back: Bob's note reaches Alice, marked with his name
    run(bob, bob_app, "remember", "The VPN profile ops-eu expires every 90 days", "--type", "discovery")
    wait_for(lambda: json.loads(run(alice, alice_app, "search", "profile expires", "--mode", "keyword",
                                      "--author", "bob", "--json").stdout)["items"], 30, "Bob's note on Alice's")


def test_a_wrong_password_is_one_line_in_status_and_health_and_never_in_a_log(tmp_path, team_url, workers):
    password = team_url.split(":")[2].split("@")[0]
    wrong = team_url.replace(password, "Wrong-Secret-42")
    app = checkout(tmp_path, "alice")
    alice = data_dir_for(tmp_path, "alice", wrong)
    workers(alice)
    run(alice, app, "remember", "Staging deploys need the VPN profile named ops-eu")

    def failed():
        status = json.loads(run(alice, app, "team", "status", "--json").stdout)
        return status if status.get("error") else None

    status = wait_for(failed, 30, "the team service to report the failure")
    assert "password authentication failed" in status["error"] and "\n" not in status["error"]
    assert status["connected"] is False and status["outbox"] == 1  # the note (a manual note has no session)
    text = run(alice, app, "team", "status").stdout
    assert sum("last error:" in line for line in text.splitlines()) == 1
    health = control.state(alice).health or {}
    assert "password authentication failed" in (health.get("team") or {}).get("error", "")
    # local memory unaffected
    assert json.loads(run(alice, app, "search", "staging VPN", "--mode", "keyword", "--json").stdout)["items"]
    sync = run(alice, app, "team", "sync", check=False)
    assert sync.returncode == 1 and "password authentication failed" in sync.stderr
    for folder, _, files in os.walk(alice):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                assert b"Wrong-Secret-42" not in handle.read() or name == "settings.json", name


def test_doctor_checks_the_team_server(tmp_path, team_url, pg):
    app = checkout(tmp_path, "alice")
    good = data_dir_for(tmp_path, "alice", team_url)
    bad = data_dir_for(tmp_path, "bob", team_url.replace(team_url.split("@")[1].split("/")[0], "127.0.0.1:1"))

    def team_line(data_dir):
        report = json.loads(run(data_dir, app, "doctor", "--json", check=False).stdout)
        return next(check for check in report if check["name"] == "team")

    line = team_line(good)
    assert line["status"] == "ok" and "reachable" in line["detail"]
    line = team_line(bad)
    assert line["status"] == "problem" and "cannot connect" in line["detail"] and "pw-" not in line["detail"]
