"""Uninstall, either way, leaves nothing running: a worker started by the plugin's or `claude-mem
install`'s hooks stops itself within seconds once that registration is gone (issue 27: after
`claude plugin uninstall` it kept running), says why, and `claude-mem uninstall`, `status` and `doctor`
say what stays on disk, how to remove it, and how to install again as the README says. Real hooks,
real workers, and the real `claude` CLI for the plugin."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from claude_mem.cli.group import cli
from claude_mem.runtime import control, environment, interpreter, origin
from conftest import REPO
from hook_support import load
from test_install import home, hook_command, read_json  # noqa: F401  (fixture)
from test_install_environment import install_for_real, run_hook_command
from test_plugin_marketplace import fresh_clone, plugin_cli
from test_worker_lifecycle import process_gone, wait_for, worker_env, worker_processes  # noqa: F401  (fixture)

PLUGIN_ID = "persistent-memory@persistent-memory"
STOP_WITHIN = 20  # the worker looks every 2 s; shutting down takes a few more under load


def running_worker(data_dir: str) -> control.WorkerState:
    return wait_for(lambda: (lambda found: found if found.running else None)(control.state(data_dir)), 60,
                    "the worker")


def started_by_installed_hooks(home, worker_env):  # noqa: F811
    """A real `claude-mem install`, then its SessionStart hook starts the worker: (data dir, project,
    settings file, worker pid)."""
    data_dir = str(worker_env)
    project = home.parent / "work" / "shop"
    install_for_real(project)
    settings_file = home / ".claude" / "settings.json"
    start = {**load("SessionStart.json"), "cwd": str(project)}
    assert run_hook_command(hook_command(settings_file, "SessionStart"), start, project).returncode == 0
    return data_dir, project, settings_file, running_worker(data_dir).pid


def doctor() -> dict[str, list[dict]]:
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    checks: dict[str, list[dict]] = {}
    for check in json.loads(result.stdout):
        checks.setdefault(check["name"], []).append(check)
    return checks


def make_venv(data_dir: str, size: int = 1_000_000) -> str:
    """A stand-in for the plugin's venv of a real size (a build takes minutes and the network)."""
    venv = environment.venv_dir(data_dir)
    os.makedirs(os.path.join(venv, "lib"), exist_ok=True)
    with open(os.path.join(venv, "lib", "blob"), "wb") as handle:
        handle.write(b"\0" * size)
    return venv


def clean_clone_advice(fix: str) -> None:
    """The README warns against adding a checkout where `make test` built its .venv as a marketplace."""
    if os.path.exists(os.path.join(REPO, ".venv")):
        assert "marketplace add <a clean clone of the repository>" in fix and REPO not in fix, fix
    assert "`claude-mem install`" in fix


def test_removing_the_installed_hooks_stops_the_worker(home, worker_env):  # noqa: F811
    data_dir, project, settings_file, pid = started_by_installed_hooks(home, worker_env)
    kept = {key: value for key, value in read_json(settings_file).items() if key != "hooks"}
    settings_file.write_text(json.dumps({**kept, "model": "opus"}))  # hooks removed by hand, another edit kept
    wait_for(lambda: process_gone(pid), STOP_WITHIN, "the worker to stop itself")
    assert not control.state(data_dir).running and not worker_processes(worker_env)
    note = origin.read_stopped(data_dir)
    assert note["pid"] == pid and note["why"] == f"claude-mem's hooks were removed from {settings_file}"
    log = open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8").read()
    assert f"started for the hooks in {settings_file}" in log and f"stopping: {note['why']}" in log
    status = CliRunner().invoke(cli, ["status"], env={"COLUMNS": "300"}).output
    assert f"the worker stopped itself at {note['at']}: {note['why']}" in status

    checks = doctor()
    assert note["why"] in checks["uninstalled"][0]["detail"]
    [kept_check] = checks["kept on disk"]
    assert kept_check["detail"].startswith(f"{data_dir} (") and "your memory (database and backups" in kept_check["detail"]
    assert f"rm -rf {data_dir}" in kept_check["fix"] and "claude-mem uninstall --purge" in kept_check["fix"]
    clean_clone_advice(checks["hooks"][0]["fix"])


def test_an_unrelated_edit_leaves_the_worker_running(home, worker_env):  # noqa: F811
    data_dir, project, settings_file, pid = started_by_installed_hooks(home, worker_env)
    settings_file.write_text(json.dumps({**read_json(settings_file), "model": "opus"}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}")  # a project settings file appears: not ours
    import time

    time.sleep(5)  # two looks of the worker
    assert control.state(data_dir).pid == pid and origin.read_stopped(data_dir) is None


def test_claude_mem_uninstall_stops_the_worker_and_says_what_stays(home, worker_env):  # noqa: F811
    data_dir, project, _, pid = started_by_installed_hooks(home, worker_env)
    venv = make_venv(data_dir)
    done = subprocess.run([sys.executable, "-m", "claude_mem", "uninstall"], capture_output=True, text=True,
                          cwd=project, timeout=120, env={**os.environ, "COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"worker stopped (pid {pid})" in lines and process_gone(pid)
    [kept] = [line for line in lines if line.startswith("kept on disk: ")]
    assert kept.startswith(f"kept on disk: {data_dir} (") and f"the plugin's environment {venv} (976.6 KB)" in kept
    [remove] = [line for line in lines if line.startswith("to remove it: ")]
    assert f"`rm -rf {venv}` frees the venv alone" in remove and "`claude-mem uninstall --purge`" in remove
    assert not os.path.exists(interpreter.record_path(data_dir))

    report = json.loads(CliRunner().invoke(cli, ["uninstall", "--json"]).output)  # again: nothing left to stop
    assert report["worker_stopped"] is None and report["kept"]["venv"] == venv
    assert report["kept"]["venv_bytes"] == 1_000_000 and report["kept"]["bytes"] > report["kept"]["memory_bytes"] > 0
    checks = doctor()
    assert checks["hooks"][0]["status"] == "problem"
    clean_clone_advice(checks["hooks"][0]["fix"])
    assert f"the plugin's environment {venv}" in checks["kept on disk"][0]["detail"]
    assert f"`rm -rf {venv}` frees the venv alone" in checks["kept on disk"][0]["fix"]
    assert "no session starts it while claude-mem is not registered" in checks["worker"][0]["detail"]
    [venv_check] = checks["plugin environment"]
    assert venv_check["detail"].endswith("nothing registered uses it") and not venv_check["fix"]


@pytest.mark.slow
def test_claude_plugin_uninstall_stops_the_worker_and_doctor_says_how_to_reinstall(home, worker_env, tmp_path):  # noqa: F811
    """The real CLI installs the plugin from a clean clone; its hook (as hooks.json runs it, with the
    interpreter `claude-mem install` would record) starts a worker that runs the plugin's code with no
    venv; `claude plugin uninstall` then stops it, and doctor's next step, followed, works."""
    data_dir = str(worker_env)
    home_dir = str(home)
    clone = fresh_clone(str(tmp_path / "clone"))
    for args in (("marketplace", "add", clone), ("install", PLUGIN_ID)):
        done = plugin_cli(*args, home=home_dir)
        assert done.returncode == 0, done.stdout + done.stderr
    interpreter.record(data_dir, sys.executable, environment.PACKAGE_PARENT,
                       interpreter.check(interpreter.requirements(clone)))
    project = home.parent / "work" / "shop"
    start = {**load("SessionStart.json"), "cwd": str(project)}
    env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "true", "CLAUDE_PLUGIN_ROOT": clone, "CLAUDE_PROJECT_DIR": str(project)}
    hook = subprocess.run([sys.executable, "-I", "-S", os.path.join(clone, "scripts", "hook.py"), "session-start"],
                          input=json.dumps(start).encode(), capture_output=True, env=env, cwd=project, timeout=60)
    assert hook.returncode == 0 and hook.stderr == b"", hook.stderr
    state = running_worker(data_dir)
    assert state.info["package"] == os.path.join(clone, "src")  # the plugin's code, the recorded interpreter
    assert state.info["python"] == sys.executable and state.info["started_for"] == f"the plugin persistent-memory ({clone})"
    assert not os.path.exists(environment.venv_dir(data_dir))

    done = plugin_cli("uninstall", PLUGIN_ID, home=home_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    wait_for(lambda: process_gone(state.pid), STOP_WITHIN, "the worker to stop itself")
    installed = os.path.join(home_dir, ".claude", "plugins", "installed_plugins.json")
    assert origin.read_stopped(data_dir)["why"] == \
        f"the plugin persistent-memory was uninstalled ({installed} no longer lists it)"
    checks = doctor()
    hooks = checks["hooks"][0]
    assert hooks["status"] == "problem" and "not registered with Claude Code" in hooks["detail"]
    assert hooks["fix"].startswith(f"`claude plugin install {PLUGIN_ID}` (its marketplace is still added)")
    assert "uninstalled" in checks and "kept on disk" in checks

    reinstalled = plugin_cli("install", PLUGIN_ID, home=home_dir)  # the next step doctor gave
    assert reinstalled.returncode == 0, reinstalled.stdout + reinstalled.stderr
    checks = doctor()
    assert checks["hooks"][0]["status"] == "ok" and "uninstalled" not in checks and "kept on disk" not in checks


def test_a_half_written_file_is_no_reason_to_stop(tmp_path):
    """Claude Code or an editor may be writing a file as the worker looks: only a file that parses and
    lacks our entry means "uninstalled"; a file rewritten with our entry kept changes nothing."""
    from claude_mem.runtime import registered
    from claude_mem.runtime.claude_config import Install

    settings_file = tmp_path / "settings.json"
    ours = Install(sys.executable, environment.PACKAGE_PARENT).hook_group("session-start", None)
    settings_file.write_text(json.dumps({"hooks": {"SessionStart": [ours]}}))
    config = tmp_path / "config"
    listing = config / "plugins" / "installed_plugins.json"
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps({"version": 2, "plugins": {PLUGIN_ID: [{"scope": "user"}]}}))
    root = tmp_path / "plugin"
    root.mkdir()
    by_hooks = registered.Watch({"kind": "settings", "files": [str(settings_file), str(tmp_path / "none.json")]},
                                environment.PACKAGE_PARENT)
    by_plugin = registered.Watch({"kind": "plugin", "root": str(root), "config": str(config)}, environment.PACKAGE_PARENT)
    assert by_hooks.registered == f"the hooks in {settings_file}"
    assert by_plugin.registered == f"the plugin persistent-memory ({root})"
    rewritten = {"version": 2, "plugins": {"other@elsewhere": [{"scope": "user"}], PLUGIN_ID: [{"scope": "user"}]}}
    for settings, plugins in (('{"hooks": {"SessionStart": [', '{"version": 2, "plugins": {"persis'),
                              (json.dumps({"model": "opus", "hooks": {"SessionStart": [ours]}}), json.dumps(rewritten))):
        settings_file.write_text(settings)
        listing.write_text(plugins)
        assert by_hooks.gone() is None and by_plugin.gone() is None
    listing.write_text(json.dumps({"version": 2, "plugins": {"other@elsewhere": [{"scope": "user"}]}}))
    assert by_plugin.gone() == f"the plugin persistent-memory was uninstalled ({listing} no longer lists it)"
    settings_file.write_text(json.dumps({"model": "opus"}))
    assert by_hooks.gone() == f"claude-mem's hooks were removed from {settings_file}"

    fresh = registered.Watch({"kind": "plugin", "root": str(root), "config": str(tmp_path / "no-config")},
                             environment.PACKAGE_PARENT)  # `--plugin-dir`: not installed, only its folder counts
    assert fresh.gone() is None
    (root / ".orphaned_at").write_text("1795659391430")
    assert fresh.gone() == f"the plugin persistent-memory was uninstalled (its folder {root} is marked orphaned)"
    nothing = registered.Watch(origin.parse("not json"), environment.PACKAGE_PARENT)
    assert nothing.registered == "" and nothing.gone() is None
