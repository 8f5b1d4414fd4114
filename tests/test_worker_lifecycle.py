"""The real worker process: start/status/stop, SIGTERM, child reaping, single instance, security on
real uvicorn, port fallback, and stale state. Every subprocess has a timeout; every worker is stopped."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from claude_mem import __version__
from claude_mem.runtime import control, discovery


def cli(*args, timeout=60, check=True):
    result = subprocess.run([sys.executable, "-m", "claude_mem", *args], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def wait_for(condition, timeout=30.0, message="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message}")


def process_gone(pid):
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def worker_processes(data_dir):
    """Live processes running the worker module for this data dir. A child the worker has just forked
    (a subprocess between its fork and its exec) still shows the worker's command line and environment
    for a moment: it is the same worker, not another one."""
    found = {}
    for proc in psutil.process_iter(["cmdline", "status", "ppid"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE or "claude_mem.worker" not in " ".join(proc.info["cmdline"] or []):
                continue
            if proc.environ().get("CLAUDE_MEM_DATA_DIR") == str(data_dir):
                found[proc.pid] = proc.info["ppid"]
        except psutil.Error:
            continue
    return sorted(pid for pid, parent in found.items() if parent not in found)


@pytest.fixture
def worker_env(data_dir, monkeypatch):
    """Worker-friendly env: any free port, the offline observer; stops whatever worker the test left
    behind. (conftest puts tests/ and the test plugins on every process's PYTHONPATH.)"""
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "0")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")
    yield data_dir
    control.stop(str(data_dir), timeout=20)
    for pid in worker_processes(data_dir):
        psutil.Process(pid).kill()


def test_start_status_stop(worker_env):
    data_dir = str(worker_env)
    started = cli("worker", "start")
    info = discovery.read_info(data_dir)
    assert set(info) == {"pid", "port", "version", "data_dir", "started", "provider", "package", "python",
                         "started_for"}
    assert info["python"] == sys.executable and info["started_for"] == ""  # started by hand: nothing registers it
    assert info["provider"] == {"name": "offline"}  # the observer the services started (CLAUDE_MEM_PROVIDER)
    assert info["version"] == __version__ and info["data_dir"] == data_dir and info["port"] > 0
    assert f"pid {info['pid']}" in started.stdout and f"http://127.0.0.1:{info['port']}" in started.stdout
    assert "already running" in cli("worker", "start").stdout

    report = json.loads(cli("worker", "status", "--json").stdout)
    assert report["running"] and report["pid"] == info["pid"] and report["url"] == f"http://127.0.0.1:{info['port']}"
    health = report["health"]
    assert health["data_dir"] == data_dir and health["version"] == __version__ and health["pid"] == info["pid"]
    assert health["uptime"] >= 0 and set(health["queue"]) == {"pending", "claimed", "done", "failed"}
    human = cli("worker", "status").stdout
    assert "running" in human and str(info["pid"]) in human and data_dir in human

    status = json.loads(cli("status", "--json").stdout)
    assert status["worker"]["running"] and status["worker"]["pid"] == info["pid"]

    assert f"pid {info['pid']}" in cli("worker", "stop").stdout
    assert process_gone(info["pid"])
    assert discovery.read_info(data_dir) is None and not discovery.lock_held(data_dir)
    stopped = cli("worker", "status", check=False)
    assert stopped.returncode == 1 and "not running" in stopped.stdout
    assert "was not running" in cli("worker", "stop").stdout
    log = open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8").read()
    assert "ready on" in log and "stopped" in log


def test_restart_gives_a_new_worker(worker_env):
    cli("worker", "start")
    first = discovery.read_info(str(worker_env))["pid"]
    cli("worker", "restart")
    second = discovery.read_info(str(worker_env))["pid"]
    assert second != first and process_gone(first)
    assert worker_processes(worker_env) == [second]


def test_sigterm_stops_services_reaps_children_and_removes_worker_json(worker_env, install_plugin):
    install_plugin("claude_mem.worker_services", "leaky-children", "test_worker_support:leaky_children")
    data_dir = str(worker_env)
    cli("worker", "start")
    pid = discovery.read_info(data_dir)["pid"]
    children_file = os.path.join(data_dir, "test-children.json")
    children = wait_for(lambda: os.path.exists(children_file) and json.load(open(children_file)), 20, "children")
    assert not process_gone(children["child"]) and not process_gone(children["orphan"])
    assert psutil.Process(children["orphan"]).ppid() != pid  # really orphaned: not in our process tree
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: process_gone(pid), 30, "the worker to exit")
    assert process_gone(children["child"]) and process_gone(children["orphan"])
    assert discovery.read_info(data_dir) is None and not discovery.lock_held(data_dir)
    log = open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8").read()
    assert "service test-children stopped" in log and "reaped" in log


def test_worker_stop_leaves_no_process_of_ours(worker_env, install_plugin):
    install_plugin("claude_mem.worker_services", "leaky-children", "test_worker_support:leaky_children")
    data_dir = str(worker_env)
    cli("worker", "start")
    pid = discovery.read_info(data_dir)["pid"]
    children_file = os.path.join(data_dir, "test-children.json")
    children = wait_for(lambda: os.path.exists(children_file) and json.load(open(children_file)), 20, "children")
    cli("worker", "stop")
    survivors = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getsid(proc.pid) == pid:
                survivors.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    assert survivors == []
    assert all(process_gone(child) for child in (pid, *children.values()))
    assert worker_processes(worker_env) == []


@pytest.mark.slow
def test_fifty_simultaneous_starts_make_one_worker(worker_env):
    data_dir = str(worker_env)
    starters = [subprocess.Popen([sys.executable, "-m", "claude_mem", "worker", "start"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True) for _ in range(50)]
    outputs = []
    try:
        for starter in starters:
            out, err = starter.communicate(timeout=240)
            assert starter.returncode == 0, err
            outputs.append(out)
    finally:
        for starter in starters:
            if starter.poll() is None:
                starter.kill()
    pid = discovery.read_info(data_dir)["pid"]
    assert all(f"pid {pid}," in out for out in outputs)
    assert sum("worker started" in out for out in outputs) == 1
    assert worker_processes(worker_env) == [pid]


def test_second_worker_process_exits_when_the_lock_is_held(worker_env):
    cli("worker", "start")
    extra = subprocess.run([sys.executable, "-m", "claude_mem.worker"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    assert extra.returncode == 3 and "another worker holds" in extra.stderr
    assert len(worker_processes(worker_env)) == 1


def request(port, method, path, headers, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_security_on_the_real_server(worker_env):
    cli("worker", "start")
    port = discovery.read_info(str(worker_env))["port"]
    own = {"Host": f"127.0.0.1:{port}"}
    status, headers, body = request(port, "GET", "/health", own)
    assert status == 200 and json.loads(body)["status"] in ("ok", "degraded")
    assert not any(name.lower().startswith("access-control-") for name in headers)
    status, _, body = request(port, "GET", "/health", {"Host": "attacker.example:%d" % port})
    assert status == 403 and json.loads(body)["error"]["code"] == "forbidden_host"
    status, _, body = request(port, "GET", "/health", {})
    assert status in (400, 403)  # HTTP/1.1 without Host: the HTTP parser refuses it before we do
    change = json.dumps({"backups_keep": 2}).encode()
    hostile = {**own, "Origin": "http://attacker.example", "Content-Type": "application/json"}
    status, _, body = request(port, "PUT", "/api/settings", hostile, change)
    assert status == 403 and json.loads(body)["error"]["code"] == "forbidden_origin"
    friendly = {**own, "Origin": f"http://localhost:{port}", "Content-Type": "application/json"}
    assert request(port, "PUT", "/api/settings", friendly, change)[0] == 200
    listening = [conn.laddr.ip for conn in psutil.Process(discovery.read_info(str(worker_env))["pid"]).net_connections()
                 if conn.status == psutil.CONN_LISTEN]
    assert listening == ["127.0.0.1"]


def test_a_taken_port_falls_back_to_a_free_one(worker_env, monkeypatch):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    taken = blocker.getsockname()[1]
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(taken))
    try:
        cli("worker", "start")
        info = discovery.read_info(str(worker_env))
        assert info["port"] != taken and control.state(str(worker_env)).running
    finally:
        blocker.close()


def test_stale_worker_json_is_reported_and_replaced(worker_env):
    data_dir = str(worker_env)
    dead = subprocess.Popen(["true"])
    dead.wait(timeout=10)
    os.makedirs(data_dir, exist_ok=True)
    discovery.write_info(data_dir, {"pid": dead.pid, "port": 9, "version": "0", "data_dir": data_dir,
                                    "started": "2020-01-01T00:00:00Z"})
    stale = cli("worker", "status", check=False)
    assert stale.returncode == 1 and "stale" in stale.stdout
    cli("worker", "start")
    assert control.state(data_dir).running and discovery.read_info(data_dir)["pid"] != dead.pid


@pytest.mark.parametrize("garbage", ["not json", "[]", '{"pid": "x", "port": 1}'])
def test_malformed_worker_json_counts_as_not_running(worker_env, garbage):
    data_dir = str(worker_env)
    os.makedirs(data_dir, exist_ok=True)
    with open(discovery.info_path(data_dir), "w", encoding="utf-8") as handle:
        handle.write(garbage)
    assert not control.state(data_dir).running
    cli("worker", "start")
    assert control.state(data_dir).running


def test_the_listening_socket_names_tcp_so_asyncio_turns_nagle_off():
    """With protocol 0, asyncio leaves Nagle on and a kept-alive client waits ~40 ms per answer."""
    from claude_mem.worker.daemon import bind

    sock = bind(0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
