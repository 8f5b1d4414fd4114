"""A post-tool hook hands its payload to the worker's capture socket, and loses nothing when the
worker cannot take it: no worker, a socket file left by a dead one, a worker that accepts and never
answers, a half-sent request, a database the worker cannot open, settings that differ."""

import asyncio
import json
import os
import socket
import threading
import time

import pytest
from bench.plugin_hooks import plugin_command

from claude_mem.capture import handoff
from claude_mem.worker.capture_socket import CaptureSocket
from hook_support import events, load, run_hook

BASH = "session-edit/06-PostToolUse.Bash.json"


def payload(index: int) -> dict:
    data = load(BASH)
    data["tool_use_id"] = f"toolu_socket_{index:04d}"
    return data


class Worker:
    """The worker's capture socket, served by an event loop in a thread of this process."""

    def __init__(self, data_dir: str) -> None:
        self.service = CaptureSocket()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.service.listen(data_dir), self.loop).result(10)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.service.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def same_settings(monkeypatch):
    """The hooks here run with CLAUDE_MEM_AUTOSTART=false: the worker's environment says so too."""
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")


@pytest.fixture
def worker(data_dir, same_settings):
    running = Worker(str(data_dir))
    yield running
    running.close()


def hook_imports(data, env=None) -> tuple[int, str]:
    """Run the post-tool hook as the plugin does, with `-X importtime`: (exit code, what it imported)."""
    import subprocess

    argv = plugin_command("post-tool")
    argv[1:1] = ["-X", "importtime"]
    full_env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false", **(env or {})}
    result = subprocess.run(argv, input=json.dumps(data).encode(), capture_output=True, env=full_env, timeout=60)
    return result.returncode, result.stderr.decode()


def test_a_running_worker_captures_the_event_and_the_hook_redacts_nothing(worker, data_dir):
    code, imported = hook_imports(payload(1))
    assert code == 0
    assert "claude_mem.capture.handoff" in imported
    assert "claude_mem.privacy" not in imported and "claude_mem.store" not in imported
    stored = events(data_dir)
    assert [event["payload"]["tool_use_id"] for event in stored] == ["toolu_socket_0001"]
    # exactly what the hook stores in its own process, once the worker is gone
    worker.close()
    assert run_hook("post-tool", payload(2)).returncode == 0
    first, second = events(data_dir)
    assert {**first["payload"], "tool_use_id": ""} == {**second["payload"], "tool_use_id": ""}
    worker.__init__(str(data_dir))  # the fixture closes it again


def test_secrets_are_redacted_by_the_worker_before_anything_is_written(worker, data_dir):
    data = payload(3)
    secret = "ghp_" + "Z3kq9V" * 6
    data["tool_input"]["command"] = f"export GITHUB_TOKEN={secret}"
    assert run_hook("post-tool", data).returncode == 0
    assert len(events(data_dir)) == 1
    for root, _dirs, names in os.walk(str(data_dir)):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                assert secret.encode() not in handle.read(), name


def test_no_worker_or_a_dead_workers_socket_file(data_dir, same_settings):
    started = time.perf_counter()
    assert run_hook("post-tool", payload(4)).returncode == 0  # no socket at all
    path = handoff.socket_path(str(data_dir))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()  # the file stays, nobody listens: connecting is refused at once
    assert run_hook("post-tool", payload(5)).returncode == 0
    assert [event["payload"]["tool_use_id"] for event in events(data_dir)] == ["toolu_socket_0004", "toolu_socket_0005"]
    assert time.perf_counter() - started < 20
    os.unlink(path)


def test_a_worker_that_accepts_and_never_answers(data_dir, same_settings):
    path = handoff.socket_path(str(data_dir))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    try:
        started = time.perf_counter()
        result = run_hook("post-tool", payload(6))
        waited = time.perf_counter() - started
    finally:
        listener.close()
        os.unlink(path)
    assert result.returncode == 0 and result.stderr == b""
    assert handoff.ANSWER_TIMEOUT_S <= waited < handoff.ANSWER_TIMEOUT_S + 15
    assert [event["payload"]["tool_use_id"] for event in events(data_dir)] == ["toolu_socket_0006"]


def test_a_half_sent_request_is_dropped_and_the_next_one_served(worker, data_dir):
    request = handoff.request("post-tool", json.dumps(payload(7)).encode(), dict(os.environ))
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(handoff.socket_path(str(data_dir)))
    client.sendall(request[: len(request) // 2])
    client.shutdown(socket.SHUT_WR)
    assert client.recv(100) == b"no\n"
    client.close()
    assert events(data_dir) == []
    assert handoff.send(str(data_dir), "post-tool", json.dumps(payload(8)).encode(), dict(os.environ)) == ([], None)
    assert [event["payload"]["tool_use_id"] for event in events(data_dir)] == ["toolu_socket_0008"]


def test_what_the_worker_does_not_take_the_hook_captures(worker, data_dir):
    """Other settings in the hook's environment (here: the project excluded), input that is not
    JSON, another hook: the worker says no, and the hook captures (or reports) it by itself."""
    raw = json.dumps(payload(9)).encode()
    excluded = {**os.environ, "CLAUDE_MEM_EXCLUDED_PROJECTS": "/*"}
    assert handoff.send(str(data_dir), "post-tool", raw, excluded) is None
    assert run_hook("post-tool", payload(9), env={"CLAUDE_MEM_EXCLUDED_PROJECTS": "/*"}).returncode == 0
    assert events(data_dir) == []  # excluded, as the hook's settings say
    assert handoff.send(str(data_dir), "post-tool", b"not json", dict(os.environ)) is None
    bad = run_hook("post-tool", b"not json")
    assert bad.returncode == 0 and b"ignored bad input" in bad.stderr
    assert os.listdir(data_dir / "quarantine")
    assert handoff.send(str(data_dir), "stop", json.dumps(load("session-edit/07-Stop.json")).encode(),
                        dict(os.environ)) is None


def test_a_database_the_worker_cannot_open_spools_the_event(worker, data_dir):
    os.makedirs(data_dir / "claude-mem.db")  # a directory where the database should be
    assert handoff.send(str(data_dir), "post-tool", json.dumps(payload(10)).encode(), dict(os.environ)) == ([], None)
    spooled = [name for name in os.listdir(data_dir / "spool") if name.endswith(".jsonl")]
    assert len(spooled) == 1
    with open(data_dir / "spool" / spooled[0], encoding="utf-8") as handle:
        assert "toolu_socket_0010" in handle.read()
