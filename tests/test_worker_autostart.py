"""Hook-side autostart: the real hooks, run as Claude Code runs them (stdout through a pipe), return at
once while a detached, scrubbed worker comes up; one worker however many hooks race; version
mismatch restarts once; `autostart=false` turns it off; a system python builds the venv first."""

import json
import os
import shutil
import subprocess
import sys
import time

import psutil
import pytest

from claude_mem import __version__
from claude_mem.runtime import autostart, control, discovery, environment
from conftest import FIXTURES, IN_CI, REPO, require
from test_worker_lifecycle import wait_for, worker_env, worker_processes  # noqa: F401  (fixture)

REAL_PIP_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "pip")  # read before HOME is isolated
PAYLOADS = os.path.join(FIXTURES, "hook-payloads")
SESSION_VARS = {"CLAUDECODE": "1", "CLAUDE_PLUGIN_ROOT": "/somewhere/plugin", "CLAUDE_PLUGIN_DATA": "/x",
                "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "CLAUDE_CODE_SESSION_ID": "abc", "CLAUDE_PROJECT_DIR": "/p"}
FAKE_WORKER = """
import http.server, json, os, sys
port_file, data_dir, version = sys.argv[1:4]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"status": "ok", "version": version, "data_dir": data_dir, "pid": os.getpid()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as handle:
    handle.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
"""


@pytest.fixture
def autostart_on(worker_env, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "true")
    return worker_env


def payload(name):
    with open(os.path.join(PAYLOADS, name), "rb") as handle:
        return handle.read()


def test_autostart_false_turns_it_off(worker_env):  # noqa: F811
    assert autostart.ensure_worker() == "off"
    assert discovery.read_info(str(worker_env)) is None and not discovery.lock_held(str(worker_env))


def test_starts_a_worker_then_finds_it_running(autostart_on):
    first = autostart.ensure_worker()
    assert first.startswith("spawned pid"), first
    wait_for(lambda: control.state(str(autostart_on)).running, 30, "the worker")
    began = time.perf_counter()
    assert autostart.ensure_worker() == "running"
    assert time.perf_counter() - began < 1.0  # one file read and one loopback request
    assert "spawned pid" in open(os.path.join(autostart_on, "logs", "hooks.log"), encoding="utf-8").read()


def test_racing_hooks_start_one_worker(autostart_on):
    code = "from claude_mem.runtime.autostart import ensure_worker; print(ensure_worker())"
    racers = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL) for _ in range(30)]
    outcomes = [racer.communicate(timeout=120)[0].strip() for racer in racers]
    assert sum(outcome.startswith("spawned") for outcome in outcomes) == 1, outcomes
    wait_for(lambda: control.state(str(autostart_on)).running, 30, "the worker")
    time.sleep(0.5)
    assert len(worker_processes(autostart_on)) == 1


def test_stale_worker_json_gets_a_new_worker(autostart_on):
    data_dir = str(autostart_on)
    dead = subprocess.Popen(["true"])
    dead.wait(timeout=10)
    os.makedirs(data_dir, exist_ok=True)
    discovery.write_info(data_dir, {"pid": dead.pid, "port": 9, "version": __version__, "data_dir": data_dir,
                                    "started": "2020-01-01T00:00:00Z"})
    assert autostart.ensure_worker().startswith("spawned")
    wait_for(lambda: control.state(data_dir).running, 30, "the worker")


@pytest.mark.parametrize(("hook", "fixture"), [("session-start", "SessionStart.json"),
                                               ("user-prompt", "UserPromptSubmit.json")])
def test_real_hook_returns_at_once_and_the_worker_is_detached_and_scrubbed(autostart_on, monkeypatch, install_plugin,
                                                                             hook, fixture):
    data_dir = str(autostart_on)
    for name, value in SESSION_VARS.items():
        monkeypatch.setenv(name, value)
    install_plugin("claude_mem.worker_services", "env-recorder", "test_worker_support:env_recorder")
    began = time.perf_counter()
    # As Claude Code runs a hook: stdin a pipe, stdout and stderr pipes read to EOF. A worker that
    # inherited them would keep them open and this call would time out.
    result = subprocess.run([sys.executable, "-m", "claude_mem", "hook", hook], input=payload(fixture),
                            capture_output=True, timeout=30)
    elapsed = time.perf_counter() - began
    assert result.returncode == 0, result.stderr
    if hook == "session-start":
        assert "hookSpecificOutput" in json.loads(result.stdout)
    state = wait_for(lambda: control.state(data_dir) if control.state(data_dir).running else None, 30, "worker")
    assert elapsed < 10
    worker = psutil.Process(state.pid)
    assert os.getsid(state.pid) == state.pid  # its own session: no signal from the terminal reaches it
    recorded_file = os.path.join(data_dir, "test-env.json")
    recorded = wait_for(lambda: os.path.exists(recorded_file) and json.load(open(recorded_file)), 20, "env")
    assert not set(SESSION_VARS) & set(recorded), sorted(set(SESSION_VARS) & set(recorded))
    assert recorded["CLAUDE_MEM_DATA_DIR"] == data_dir
    if sys.platform.startswith("linux"):
        links = {fd: os.readlink(f"/proc/{state.pid}/fd/{fd}") for fd in (0, 1, 2)}
        assert links[0] == os.devnull and links[1] == os.devnull
        assert links[2].endswith("worker-stderr.log")
    assert worker.cwd() == data_dir


def test_version_mismatch_restarts_once(autostart_on, tmp_path):
    data_dir = str(autostart_on)
    os.makedirs(data_dir, exist_ok=True)

    def fake_worker(version):
        port_file = str(tmp_path / f"port-{version}")
        fake = subprocess.Popen([sys.executable, "-c", FAKE_WORKER, port_file, data_dir, version])
        port = int(wait_for(lambda: os.path.exists(port_file) and open(port_file).read(), 20, "fake worker"))
        discovery.write_info(data_dir, {"pid": fake.pid, "port": port, "version": version, "data_dir": data_dir,
                                        "started": "2020-01-01T00:00:00Z"})
        return fake

    old = fake_worker("0.0.1-old")
    try:
        outcome = autostart.ensure_worker()
        assert outcome.startswith("restarting"), outcome
        old.wait(timeout=20)  # it was asked to stop
        state = wait_for(lambda: control.state(data_dir) if control.state(data_dir).running else None, 60, "worker")
        assert state.health["version"] == __version__
        control.stop(data_dir, timeout=20)

        again = fake_worker("0.0.2-other")
        try:
            assert autostart.ensure_worker() == "mismatch"  # once per version of ours, no restart loop
            assert again.poll() is None
        finally:
            again.kill()
            again.wait(timeout=10)
    finally:
        if old.poll() is None:
            old.kill()
            old.wait(timeout=10)


@pytest.mark.slow
def test_plugin_hook_with_system_python_builds_the_venv_in_the_background(autostart_on, monkeypatch):
    """The plugin runs hooks as `python3 -I -S scripts/hook.py`: no site-packages, so the worker's
    packages are missing; the hook must return at once while a detached process builds
    <data dir>/venv (pip install of this checkout) and then becomes the worker."""
    system_python = shutil.which("python3")
    require(system_python is not None, "python3 is not on PATH")
    data_dir = str(autostart_on)
    if os.path.isdir(REAL_PIP_CACHE):
        monkeypatch.setenv("PIP_CACHE_DIR", REAL_PIP_CACHE)
    began = time.perf_counter()
    result = subprocess.run([system_python, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), "session-start"],
                            input=payload("SessionStart.json"), capture_output=True, timeout=30)
    elapsed = time.perf_counter() - began
    assert result.returncode == 0 and "hookSpecificOutput" in json.loads(result.stdout), result.stderr
    assert elapsed < 10
    log = os.path.join(data_dir, "logs", "hooks.log")
    assert "bootstrapping pid" in open(log, encoding="utf-8").read()
    # While the venv builds, further hooks leave it alone.
    assert autostart.ensure_worker() == "starting"
    state = wait_for(lambda: control.state(data_dir) if control.state(data_dir).running else None,
                     900 if IN_CI else 600, "the venv build and the worker")
    assert psutil.Process(state.pid).exe().startswith(os.path.join(data_dir, "venv")) or \
        os.path.join(data_dir, "venv") in " ".join(psutil.Process(state.pid).cmdline())
    assert open(os.path.join(data_dir, "venv", environment.VENV_MARKER)).read().strip() == environment.venv_stamp()
    assert "venv ready" in open(log, encoding="utf-8").read()


def test_autostart_keeps_the_hook_path_light(autostart_on):
    """With the worker running, the hook-side check imports nothing heavy (STYLE rule 5)."""
    assert autostart.ensure_worker().startswith("spawned")
    wait_for(lambda: control.state(str(autostart_on)).running, 30, "the worker")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from claude_mem.runtime.autostart import ensure_worker; "
        "outcome = ensure_worker(); heavy = ('typing', 'dataclasses', 'logging', 'pathlib', 'subprocess', "
        "'http.client', 'psutil', 'starlette', 'asyncio'); "
        "print(outcome, [name for name in heavy if name in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code, os.path.join(REPO, "src")],
                            capture_output=True, text=True, timeout=30,
                            env={**os.environ, "CLAUDE_MEM_DATA_DIR": str(autostart_on)})
    assert result.stdout.strip() == "running []", result.stdout + result.stderr


@pytest.mark.parametrize("reply", [b"", b"garbage", b"HTTP/1.1 200 OK\r\n\r\nnot json", b"HTTP/1.1 500 X\r\n\r\n{}",
                                   b"HTTP/1.1 200 OK\r\n\r\n[1]", b"HTTP/1.1 200 OK\r\n\r\n{\"a\": 1}"])
def test_health_probe_survives_any_reply(reply):
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer():
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(reply)

    thread = threading.Thread(target=answer)
    thread.start()
    try:
        result = discovery.probe_health(server.getsockname()[1], timeout=5)
    finally:
        thread.join(timeout=10)
        server.close()
    assert result == ({"a": 1} if reply.endswith(b'{"a": 1}') else None)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert discovery.probe_health(port, timeout=1) is None


def test_a_venv_built_from_other_dependencies_is_not_ready(data_dir):
    """A venv from before a dependency was added (same version, other pyproject) gets rebuilt."""
    python = os.path.join(data_dir, "venv", "bin", "python")
    os.makedirs(os.path.dirname(python))
    open(python, "w").close()
    marker = os.path.join(data_dir, "venv", environment.VENV_MARKER)
    with open(marker, "w") as handle:
        handle.write(__version__ + "\n")  # the stamp of a build that predates the pyproject digest
    assert not environment.venv_ready(data_dir)
    with open(marker, "w") as handle:
        handle.write(environment.venv_stamp() + "\n")
    assert environment.venv_ready(data_dir)
    assert environment.venv_stamp().startswith(__version__ + " ")
