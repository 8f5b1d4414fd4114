"""`claude-mem doctor`, `claude-mem repair` and the stale-worker check, against real files, real
SQLite databases, real processes and the real Claude Code CLI (in a temp HOME)."""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import psutil
import pytest
from click.testing import CliRunner

from claude_mem import __version__
from claude_mem.cli import cli
from claude_mem.cli.registration import HOOK_EVENTS, read_registration
from claude_mem.runtime import control, discovery, environment
from claude_mem.store import backup
from conftest import FIXTURES, IN_CI, REPO
from test_plugin_marketplace import fresh_clone, plugin_cli
from test_worker_autostart import REAL_PIP_CACHE
from test_worker_lifecycle import wait_for, worker_env  # noqa: F401  (fixture)

ORIGINAL_DB = os.path.join(FIXTURES, "claude-mem-13.25.3", "claude-mem.db")
PLUGIN_ID = "persistent-memory@persistent-memory"


@pytest.fixture
def home(data_dir):
    return os.environ["HOME"]


@pytest.fixture
def offline(monkeypatch):
    """A deterministic observer: `auto` would depend on this machine's Claude Code login and keys."""
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")


def run(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env=env or None)


def doctor() -> tuple[int, list[dict]]:
    result = run("doctor", "--json")
    assert result.exit_code in (0, 1), (result.output, result.exception)
    return result.exit_code, json.loads(result.stdout)


def named(checks: list[dict], name: str) -> list[dict]:
    return [check for check in checks if check["name"] == name]


def one(checks: list[dict], name: str) -> dict:
    [check] = named(checks, name)
    return check


def problems(checks: list[dict]) -> list[dict]:
    return [check for check in checks if check["status"] == "problem"]


def write_json(path: str, value: object) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def hooks_settings(command: str = "claude-mem hook", events=HOOK_EVENTS) -> dict:
    """Hooks as a settings file holds them: each event runs `<command> <hook name>`."""
    names = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PreToolUse": "pre-tool", "PostToolUse": "post-tool",
             "PostToolUseFailure": "post-tool", "Stop": "stop", "SessionEnd": "session-end"}
    return {"hooks": {event: [{"matcher": "*", "hooks": [{"type": "command", "command": f"{command} {names[event]}"}]}]
                      for event in events}}


def register_settings_hooks(home: str, **kwargs) -> str:
    path = os.path.join(home, ".claude", "settings.json")
    current = read_json(path) if os.path.exists(path) else {}
    write_json(path, {**current, **hooks_settings(**kwargs)})
    return path


def register_plugin(home: str, plugin_id: str = PLUGIN_ID, folder: str = REPO, enabled: bool = True) -> None:
    """What `claude plugin install` writes (the real CLI writes the same: see the plugin test below)."""
    name, marketplace = plugin_id.split("@")
    config = os.path.join(home, ".claude")
    install_path = os.path.join(config, "plugins", "cache", marketplace, name, __version__)
    os.makedirs(install_path, exist_ok=True)
    installed_file = os.path.join(config, "plugins", "installed_plugins.json")
    installed = read_json(installed_file) if os.path.exists(installed_file) else {"version": 2, "plugins": {}}
    installed["plugins"][plugin_id] = [{"scope": "user", "installPath": install_path, "version": __version__,
                                        "installedAt": "2026-11-23T10:35:08.698Z"}]
    write_json(installed_file, installed)
    if plugin_id == PLUGIN_ID:
        write_json(os.path.join(config, "plugins", "known_marketplaces.json"),
                   {marketplace: {"source": {"source": "directory", "path": folder}, "installLocation": folder}})
    settings_file = os.path.join(config, "settings.json")
    current = read_json(settings_file) if os.path.exists(settings_file) else {}
    current.setdefault("enabledPlugins", {})[plugin_id] = enabled
    write_json(settings_file, current)


def digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def make_database(data_dir, notes=("Deploys need VPN access",)) -> str:
    for note in notes:
        assert run("remember", note, "--project", str(data_dir)).exit_code == 0
    path = os.path.join(data_dir, "claude-mem.db")
    assert os.path.exists(path) and not os.path.exists(path + "-wal")  # closed: WAL checkpointed away
    return path


def corrupt(path: str) -> None:
    """Scribble over every page but the first: the file still opens, quick_check fails."""
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(size - 4096))
    assert backup.check_database(path) is not None


# -- a healthy install ---------------------------------------------------------------------------

def test_a_healthy_data_dir_passes_and_nothing_changes(data_dir, home, offline):
    path = make_database(data_dir)
    register_settings_hooks(home)
    before = sorted(os.listdir(data_dir)), digest(path)
    code, checks = doctor()
    assert code == 0, problems(checks)
    assert {check["status"] for check in checks} <= {"ok", "info"}, checks
    assert one(checks, "database")["status"] == "ok" and "quick_check ok, full-text indexes ok" in \
        one(checks, "database")["detail"]
    assert one(checks, "data dir")["status"] == "ok" and one(checks, "hook python")["status"] == "ok"
    assert one(checks, "hooks")["status"] == "ok" and "settings.json" in one(checks, "hooks")["detail"]
    assert one(checks, "observer")["status"] == "ok" and one(checks, "observer")["detail"].startswith("offline")
    assert one(checks, "original claude-mem") == {"name": "original claude-mem", "status": "ok",
                                                   "detail": "not installed", "fix": ""}
    assert {"python", "disk space", "settings", "worker", "plugin environment", "search"} <= {c["name"] for c in checks}
    assert (sorted(os.listdir(data_dir)), digest(path)) == before  # no -wal, no -shm, same bytes
    human = run("doctor", COLUMNS="200")
    assert human.exit_code == 0 and "all good" in human.output and "✓ database" in human.output


def test_repair_with_nothing_to_repair_says_so(data_dir, home, offline):
    make_database(data_dir)
    register_settings_hooks(home)
    result = run("repair")
    assert result.exit_code == 0 and result.output.startswith("nothing to repair\n"), result.output
    assert "all good" in result.output


def test_no_data_dir_yet_is_information_and_nothing_is_created(data_dir, home, offline):
    register_settings_hooks(home)
    code, checks = doctor()
    assert code == 0 and one(checks, "data dir")["status"] == "info" and one(checks, "database")["status"] == "info"
    assert not data_dir.exists()


def test_a_data_dir_others_can_read_is_a_problem_that_repair_fixes(data_dir, home, offline):
    make_database(data_dir)
    register_settings_hooks(home)
    os.chmod(data_dir, 0o755)
    code, checks = doctor()
    assert code == 1 and "0755" in one(checks, "data dir")["detail"] and "repair" in one(checks, "data dir")["fix"]
    result = run("repair")
    assert "permissions 0755 → 0700" in result.output and result.exit_code == 0, result.output
    assert os.stat(data_dir).st_mode & 0o777 == 0o700


# -- the database ---------------------------------------------------------------------------------

def test_a_corrupt_database_is_reported_and_left_as_it_is(data_dir, home, offline):
    path = make_database(data_dir)
    register_settings_hooks(home)
    corrupt(path)
    before = sorted(os.listdir(data_dir)), digest(path)
    code, checks = doctor()
    assert code == 1
    database = one(checks, "database")
    assert database["status"] == "problem" and "damaged" in database["detail"] and path in database["detail"]
    assert "no usable backup" in database["fix"] and "claude-mem repair" in database["fix"]
    assert (sorted(os.listdir(data_dir)), digest(path)) == before


def test_a_damaged_full_text_index_is_found_read_only_and_repair_rebuilds_it(data_dir, home, offline):
    import sqlite3

    path = make_database(data_dir, notes=("Deploys need VPN access", "The cache is warmed at start"))
    register_settings_hooks(home)
    conn = sqlite3.connect(path)
    # Every b-tree stays intact (quick_check passes); the index's own blocks are garbled.
    for rowid, block in conn.execute("SELECT id, block FROM observations_fts_data WHERE length(block) > 8").fetchall():
        conn.execute("UPDATE observations_fts_data SET block = ? WHERE id = ?", (bytes(b ^ 0x5A for b in block), rowid))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for leftover in (path + "-wal", path + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    before = digest(path)
    code, checks = doctor()
    assert code == 1 and "observations_fts" in one(checks, "database")["detail"], checks
    assert digest(path) == before
    result = run("repair")
    assert "rebuilt observations_fts" in result.output and result.exit_code == 0, result.output
    assert one(doctor()[1], "database")["status"] == "ok" and "VPN" in run("search", "VPN").output


def test_repair_restores_the_newest_good_backup_with_yes(data_dir, home, offline):
    path = make_database(data_dir)
    register_settings_hooks(home)
    assert run("backup").exit_code == 0
    corrupt(path)
    code, checks = doctor()
    assert code == 1 and "restores claude-mem-" in one(checks, "database")["fix"]
    result = run("repair", "--yes")
    assert result.exit_code == 0, result.output
    assert "database: moved aside to" in result.output and "restored from claude-mem-" in result.output
    assert backup.check_database(path) is None
    assert "Deploys need VPN access" in run("search", "VPN").output
    assert one(doctor()[1], "database")["status"] == "ok"


def test_repair_without_a_terminal_or_yes_refuses_to_restore(data_dir, home, offline):
    path = make_database(data_dir)
    register_settings_hooks(home)
    assert run("backup").exit_code == 0
    corrupt(path)
    before = sorted(os.listdir(data_dir)), digest(path)
    result = subprocess.run([sys.executable, "-m", "claude_mem", "repair"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "database: damaged, NOT restored: that needs your confirmation" in result.stdout
    assert "✗ database" in result.stdout  # the doctor run that follows still reports it
    assert (sorted(os.listdir(data_dir)), digest(path)) == before


# -- the plugin's environment ---------------------------------------------------------------------

def write_progress(data_dir, **fields) -> None:
    os.makedirs(data_dir, exist_ok=True)
    write_json(os.path.join(data_dir, environment.PROGRESS_FILE), {"version": environment.venv_stamp(),
                                                                   "source": REPO, **fields})


def test_a_failed_build_is_a_problem_with_its_log(data_dir, home, offline):
    register_plugin(home)
    write_progress(data_dir, pid=1, started=time.time() - 60, stage="worker", error="CalledProcessError: no space left")
    code, checks = doctor()
    found = one(checks, "plugin environment")
    log = os.path.join(data_dir, environment.BUILD_LOG)
    assert code == 1 and found["status"] == "problem"
    assert "build failed while installing the worker" in found["detail"] and "no space left" in found["detail"]
    assert log in found["detail"] and "claude-mem repair" in found["fix"]
    status = run("status", COLUMNS="300")
    assert f"plugin environment: build failed while installing the worker and the search model: " \
           f"CalledProcessError: no space left (log: {log})" in status.output
    assert json.loads(run("status", "--json").stdout)["environment"]["state"] == "failed"


def test_a_failed_build_is_only_a_warning_when_the_plugin_does_not_run_the_hooks(data_dir, home, offline):
    register_settings_hooks(home)
    write_progress(data_dir, pid=1, stage="venv", error="OSError: boom")
    assert one(doctor()[1], "plugin environment")["status"] == "warning"


def test_a_build_in_progress_is_information_with_stage_and_estimate(data_dir, home, offline):
    register_plugin(home)
    builder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write_progress(data_dir, pid=builder.pid, started=time.time() - 12, stage="worker",
                       stage_started=time.time() - 4, last_seconds={"venv": 3, "worker": 40})
        code, checks = doctor()
        found = one(checks, "plugin environment")
        assert found["status"] == "info", found
        assert "building: step 2 of 2, installing the worker and the search model, about 25%" in found["detail"]
        assert "12 s so far" in found["detail"] and "about 36 s left" in found["detail"]
        assert found["detail"].endswith("; memory tools and capture work now; until the worker (observer, search by "
                                        "meaning) runs, search is by keyword"), found["detail"]
        log = os.path.join(data_dir, "logs", "venv-build.log")
        assert f"log: {log}" in found["detail"] and "since 20" in found["detail"]
        status = run("status", COLUMNS="300").output
        assert "plugin environment: building: step 2 of 2, installing the worker and the search model" in status
        assert f"log: {log}" in status
        shown = json.loads(run("status", "--json").output)["environment"]
        assert (shown["state"], shown["stage"], shown["step"], shown["steps"], shown["percent"]) == \
            ("building", "worker", 2, 2, 25)
        assert shown["started"].endswith("Z") and shown["log"] == log and shown["elapsed"] >= 12
    finally:
        builder.kill()
        builder.wait(timeout=10)
    interrupted = one(doctor()[1], "plugin environment")
    assert interrupted["status"] == "info" and "interrupted" in interrupted["detail"] and "repair" in interrupted["fix"]


def test_status_says_nothing_of_an_environment_that_was_never_built(data_dir):
    assert "plugin environment" not in run("status").output
    assert json.loads(run("status", "--json").stdout)["environment"]["shown"] is False


@pytest.mark.slow
def test_repair_rebuilds_a_failed_environment(worker_env, monkeypatch):  # noqa: F811
    """A real build (pip from its cache); the worker is started from the new environment only once the
    damaged database may be restored: a worker restores it on its own as it starts."""
    data_dir = str(worker_env)
    if os.path.isdir(REAL_PIP_CACHE):
        monkeypatch.setenv("PIP_CACHE_DIR", REAL_PIP_CACHE)
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "true")
    path = make_database(data_dir)
    assert run("backup").exit_code == 0
    corrupt(path)
    damaged = digest(path)
    write_progress(data_dir, pid=1, stage="worker", error="CalledProcessError: pip failed")
    with open(os.path.join(data_dir, environment.BOOTSTRAP_FAILED), "w") as handle:
        handle.write("2026-11-23T10:00:00Z\n")

    def repair(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "claude_mem", "repair", *args], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=900 if IN_CI else 600,
                              env={**os.environ, "COLUMNS": "200"})

    result = repair()
    assert "plugin environment: rebuilding" in result.stdout, result.stdout + result.stderr
    assert "  creating the environment\n" in result.stdout and "  installing the worker and the search model\n" in \
        result.stdout  # each stage, said as it starts (no terminal: no progress bar)
    assert "plugin environment: built" in result.stdout
    assert "worker: not started: it would restore the backup" in result.stdout
    assert environment.venv_ready(data_dir) and environment.state(data_dir)["state"] == "ready"
    assert not os.path.exists(os.path.join(data_dir, environment.BOOTSTRAP_FAILED))
    assert digest(path) == damaged and not control.state(data_dir).running
    assert "· plugin environment" in result.stdout  # doctor, run again: built (no plugin registered: info)

    result = repair("--yes")
    assert "restored from claude-mem-" in result.stdout and "plugin environment" not in result.stdout.split("\n\n")[0]
    assert "worker: running, pid" in result.stdout, result.stdout + result.stderr
    assert control.state(data_dir).running and backup.check_database(path) is None


# -- hook registration ----------------------------------------------------------------------------

def test_hooks_registered_through_the_plugin_with_the_real_cli(data_dir, home, tmp_path, offline):
    clone = fresh_clone(str(tmp_path / "clone"))
    for args in (("marketplace", "add", clone), ("install", PLUGIN_ID)):
        done = plugin_cli(*args, home=home)
        assert done.returncode == 0, done.stdout + done.stderr
    registration = read_registration()
    [install] = registration.installs
    assert (install.plugin_id, install.scope, install.version, install.enabled) == (PLUGIN_ID, "user", __version__, True)
    assert install.folder == clone and install.install_path.startswith(os.path.join(home, ".claude", "plugins"))
    code, checks = doctor()
    hooks = one(checks, "hooks")
    assert hooks["status"] == "ok" and f"plugin {PLUGIN_ID} v{__version__} (user scope) from {clone}" in hooks["detail"]
    # The plugin runs the hooks: its environment is what the worker will run from.
    assert "the next session start builds it" in one(checks, "plugin environment")["detail"]
    assert "the plugin's hooks run with it" in one(checks, "hook python")["detail"]

    settings_file = register_settings_hooks(home)  # both: every event captured twice
    code, checks = doctor()
    twice = one(checks, "hooks")
    assert code == 1 and twice["status"] == "problem" and "registered twice" in twice["detail"]
    assert settings_file in twice["detail"] and f"claude plugin uninstall {PLUGIN_ID}" in twice["fix"]

    assert plugin_cli("disable", PLUGIN_ID, home=home).returncode == 0
    assert read_json(settings_file)["enabledPlugins"] == {PLUGIN_ID: False}
    hooks = one(doctor()[1], "hooks")
    assert hooks["status"] == "ok" and hooks["detail"].startswith(f"in {settings_file}")


def test_a_disabled_plugin_and_no_hooks_are_problems(data_dir, home, offline):
    code, checks = doctor()
    assert code == 1 and "not registered with Claude Code" in one(checks, "hooks")["detail"]
    assert "claude plugin install persistent-memory@persistent-memory" in one(checks, "hooks")["fix"]
    register_plugin(home, enabled=False)
    disabled = one(doctor()[1], "hooks")
    assert disabled["status"] == "problem" and "is disabled" in disabled["detail"]
    assert disabled["fix"] == f"`claude plugin enable {PLUGIN_ID}`"


def test_hooks_written_by_claude_mem_install(data_dir, home, tmp_path, monkeypatch, offline):
    monkeypatch.chdir(tmp_path)
    assert run("install", "--scope", "local").exit_code == 0
    local = str(tmp_path / ".claude" / "settings.local.json")
    assert one(doctor()[1], "hooks") == {"name": "hooks", "status": "ok", "detail": f"in {local} (7 events)", "fix": ""}
    monkeypatch.chdir(home)  # project and local settings come from the folder Claude Code starts in
    assert one(doctor()[1], "hooks")["status"] == "problem"


def test_hooks_from_settings_files(data_dir, home, tmp_path, monkeypatch, offline):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    local = str(project / ".claude" / "settings.local.json")
    write_json(local, hooks_settings(command="/opt/tools/bin/python -m claude_mem hook"))
    hooks = one(doctor()[1], "hooks")
    assert hooks == {"name": "hooks", "status": "ok", "detail": f"in {local} (7 events)", "fix": ""}
    # Someone else's hooks are not ours; a partial registration is a warning.
    write_json(local, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}})
    shared = str(project / ".claude" / "settings.json")
    write_json(shared, hooks_settings(events=("SessionStart", "Stop")))
    partial = one(doctor()[1], "hooks")
    assert partial["status"] == "warning" and f"in {shared}, but not for UserPromptSubmit" in partial["detail"]


def test_claude_config_dir_is_honoured(data_dir, home, tmp_path, monkeypatch, offline):
    config = tmp_path / "config"
    register_settings_hooks(str(tmp_path / "elsewhere"))  # ~/.claude is not read when the variable is set
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    shutil.move(str(tmp_path / "elsewhere" / ".claude"), str(config))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    hooks = one(doctor()[1], "hooks")
    assert hooks["status"] == "ok" and str(config / "settings.json") in hooks["detail"]
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert one(doctor()[1], "hooks")["status"] == "problem"


def test_a_settings_file_that_is_not_json_is_a_warning(data_dir, home, offline):
    os.makedirs(os.path.join(home, ".claude"))
    with open(os.path.join(home, ".claude", "settings.json"), "w") as handle:
        handle.write("{not json")
    checks = named(doctor()[1], "hooks")
    assert checks[0]["status"] == "warning" and "cannot read" in checks[0]["detail"]


# -- the original claude-mem ------------------------------------------------------------------------

def install_original(home: str, port: int | None = None) -> str:
    theirs = os.path.join(home, ".claude-mem")
    os.makedirs(theirs)
    shutil.copyfile(ORIGINAL_DB, os.path.join(theirs, "claude-mem.db"))
    if port is not None:
        write_json(os.path.join(theirs, "settings.json"), {"CLAUDE_MEM_WORKER_PORT": str(port)})
    return theirs


def test_the_original_claude_mem_beside_us(data_dir, home, monkeypatch, offline):
    monkeypatch.delenv("CLAUDE_MEM_DATA_DIR")  # our default, ~/.claude-mem-py
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        theirs = install_original(home, port=listener.getsockname()[1])
        before = digest(os.path.join(theirs, "claude-mem.db")), sorted(os.listdir(theirs))
        register_plugin(home, "claude-mem@thedotmack")
        code, checks = doctor()
        found = named(checks, "original claude-mem")
        assert found[0]["status"] == "info", found
        assert f"data in {theirs} (240 observations)" in found[0]["detail"]
        assert "plugin claude-mem@thedotmack (enabled)" in found[0]["detail"]
        assert f"a worker on its port {listener.getsockname()[1]}" in found[0]["detail"]
        assert len(found) == 1  # ours is not registered: no double capture
        register_settings_hooks(home)
        found = named(doctor()[1], "original claude-mem")
        assert found[1]["status"] == "warning" and "both capture every session" in found[1]["detail"]
        assert found[1]["fix"] == "`claude plugin disable claude-mem@thedotmack`, or remove ours"
        assert (digest(os.path.join(theirs, "claude-mem.db")), sorted(os.listdir(theirs))) == before
        assert not os.path.exists(os.path.join(home, ".claude-mem-py"))
    finally:
        listener.close()


def test_variables_pointing_at_the_original_are_problems(data_dir, home, monkeypatch, offline):
    theirs = install_original(home)
    register_settings_hooks(home)
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", theirs)
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "37777")
    code, checks = doctor()
    assert code == 1
    data = one(checks, "CLAUDE_MEM_DATA_DIR")
    assert data["status"] == "problem" and f"points at {theirs}, the original claude-mem's data dir" in data["detail"]
    assert data["fix"].startswith("unset CLAUDE_MEM_DATA_DIR")
    port = one(checks, "CLAUDE_MEM_WORKER_PORT")
    assert port["status"] == "problem" and "our worker port 37777 (from CLAUDE_MEM_WORKER_PORT)" in port["detail"]
    # The original's database is not ours: reported, and left alone.
    assert one(checks, "database")["status"] == "problem" and "not a claude-mem database" in \
        one(checks, "database")["detail"]
    # Set to other values, both variables are still read by the original too.
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "39123")
    checks = doctor()[1]
    assert "the original claude-mem reads it too" in one(checks, "CLAUDE_MEM_DATA_DIR")["detail"]
    assert "both workers would want port 39123" in one(checks, "CLAUDE_MEM_WORKER_PORT")["detail"]
    assert one(checks, "CLAUDE_MEM_WORKER_PORT")["fix"].startswith("unset it and `claude-mem settings set worker_port")


# -- a worker whose code is gone --------------------------------------------------------------------

def copy_package(destination: str) -> str:
    shutil.copytree(os.path.join(REPO, "src", "claude_mem"), os.path.join(destination, "claude_mem"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def start_worker_from(package_parent: str, data_dir: str) -> int:
    env = {**os.environ, "PYTHONPATH": package_parent + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "claude_mem.worker"], env=env, cwd=data_dir,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    state = wait_for(lambda: control.state(data_dir) if control.state(data_dir).running else None, 60, "the worker")
    assert state.pid == proc.pid
    assert discovery.read_info(data_dir)["package"] == package_parent
    return proc.pid


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_the_next_command_stops_a_worker_whose_folder_is_gone(worker_env, tmp_path):  # noqa: F811
    data_dir = str(worker_env)
    os.makedirs(data_dir, exist_ok=True)
    plugin = str(tmp_path / "plugin")
    pid = start_worker_from(copy_package(os.path.join(plugin, "src")), data_dir)
    shutil.rmtree(plugin)  # `claude plugin uninstall`
    assert run("hook", "--help").exit_code == 0 and not gone(pid)  # hooks never check
    result = run("status")
    assert result.exit_code == 0, result.output
    assert f"claude-mem: stopped the worker (pid {pid}): the folder it runs from ({plugin}/src) is gone" in result.stderr
    wait_for(lambda: gone(pid), 30, "the stale worker to exit")
    assert discovery.read_info(data_dir) is None
    assert "stopped the worker" not in run("status").stderr  # once


def test_doctor_stops_a_worker_whose_environment_came_from_an_uninstalled_plugin(worker_env, tmp_path):  # noqa: F811
    data_dir = str(worker_env)
    plugin = tmp_path / "cache" / "persistent-memory" / __version__
    plugin.mkdir(parents=True)
    write_progress(data_dir, pid=1, stage="ready", source=str(plugin))
    site = os.path.join(environment.venv_dir(data_dir), "lib", "site-packages")
    pid = start_worker_from(copy_package(site), data_dir)
    assert run("status").stderr == ""  # the plugin folder is still there: nothing stale
    worker = one(doctor()[1], "worker")
    assert worker["status"] == "ok" and worker["detail"].startswith(f"running, pid {pid}, http://127.0.0.1:")
    shutil.rmtree(plugin)
    code, checks = doctor()
    [stopped, *_] = named(checks, "worker")
    assert stopped["status"] == "info" and stopped["detail"] == (
        f"stopped the worker (pid {pid}): the plugin folder its environment was built from ({plugin}) "
        "is gone: the plugin was uninstalled or moved")
    wait_for(lambda: gone(pid), 30, "the stale worker to exit")


def test_repair_restarts_a_worker_of_another_version(worker_env, tmp_path):  # noqa: F811
    data_dir = str(worker_env)
    os.makedirs(data_dir, exist_ok=True)
    register_settings_hooks(os.environ["HOME"])
    old = copy_package(str(tmp_path / "old"))
    init = os.path.join(old, "claude_mem", "__init__.py")
    with open(init, encoding="utf-8") as handle:
        source = handle.read()
    with open(init, "w", encoding="utf-8") as handle:
        handle.write(source.replace(f'"{__version__}"', '"0.0.1"'))
    pid = start_worker_from(old, data_dir)
    code, checks = doctor()
    worker = one(checks, "worker")
    assert code == 1 and worker["status"] == "problem" and "version 0.0.1" in worker["detail"], worker
    assert worker["fix"] == "`claude-mem repair` (restarts it)"
    result = run("repair")
    assert f"worker: stopped (pid {pid})" in result.output and "worker: running, pid" in result.output, result.output
    assert gone(pid) and result.exit_code == 0, result.output
    state = control.state(data_dir)
    assert state.running and state.health["version"] == __version__ and state.pid != pid
