import importlib
import json
import os
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from claude_mem import __version__
from claude_mem.cli import cli
from claude_mem.cli.group import LAZY


@pytest.fixture
def runner():
    return CliRunner()


def test_version(runner):
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_help_explains_every_command(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    names = cli.list_commands(click.Context(cli))
    assert {"search", "doctor", "install", "hook", "mcp", "statusline"} <= set(names)
    for name in names:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and name in result.output
        assert (command.help or "").strip(), f"{name} has no help text"
        sub = runner.invoke(cli, [name, "--help"])
        assert sub.exit_code == 0 and "Usage:" in sub.output


def every_cli_module() -> None:
    """Import every module of `claude_mem.cli`: each registers its commands on the group."""
    import claude_mem.cli as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"claude_mem.cli.{module.name}")


def test_the_lazy_map_names_every_command_with_its_own_short_help():
    """`--help` lists commands from `LAZY` without loading them: every command a module registers is in it,
    at the module and attribute it names, with the first line of its own docstring (so they cannot drift)."""
    every_cli_module()
    assert set(cli.commands) == set(LAZY)
    for name, lazy in LAZY.items():
        module, _, attribute = lazy.where.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert cli.commands[name] is command, name
        assert command.get_short_help_str(limit=10_000) == lazy.short_help, name


def test_help_lists_what_the_commands_would_say():
    """The same `--help` text from the lazy map as from the loaded commands."""
    def help_text(load_all: bool) -> str:
        script = ("import importlib, pkgutil, sys\nimport claude_mem.cli as package\n"
                  + ("for m in pkgutil.iter_modules(package.__path__):\n"
                     "    importlib.import_module('claude_mem.cli.' + m.name)\n" if load_all else "")
                  + "package.cli(['--help'], prog_name='claude-mem')\n")
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "COLUMNS": "100"}).stdout

    lazy = help_text(False)
    assert "search " in lazy and "Commands:" in lazy
    assert lazy == help_text(True)


def test_a_command_loads_only_its_own_module(data_dir):
    """`claude-mem search` runs without importing doctor, export, import, install or the observer's providers."""
    script = ("import sys\nfrom claude_mem.cli import cli\n"
              "try:\n    cli(['search', '--mode', 'keyword', 'anything'])\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in sys.modules if m.startswith('claude_mem.cli.') or m.startswith('claude_mem.observer')))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir), "CLAUDE_MEM_AUTOSTART": "false"})
    loaded = result.stdout.strip().splitlines()[-1]
    assert "claude_mem.cli.recall" in loaded, result.stdout + result.stderr
    for unwanted in ("doctor", "exporting", "importing", "install", "checks", "observer"):
        assert unwanted not in loaded, loaded


def test_status_on_an_empty_store_creates_nothing(runner, data_dir):
    result = runner.invoke(cli, ["status", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["store"]
    assert report["data_dir"] == str(data_dir)
    assert report["database_exists"] is False
    assert report["counts"]["sessions"] == 0
    assert report["counts"]["events"] == {"pending": 0, "claimed": 0, "done": 0, "failed": 0}
    assert not data_dir.exists()
    human = runner.invoke(cli, ["status"])
    assert "not created yet" in human.output


def test_status_reports_counts_truthfully(runner, data_dir):
    assert runner.invoke(cli, ["migrate"]).exit_code == 0
    from claude_mem.store import db

    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('s', '/p')")
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (1, 1, 'hi')")
    for index, state in enumerate(["pending", "pending", "failed", "done"]):
        conn.execute(
            "INSERT INTO pending_events (event_key, session_id, kind, payload, status) VALUES (?, 1, 'tool', '{}', ?)",
            (f"k{index}", state),
        )
    conn.close()
    report = json.loads(runner.invoke(cli, ["status", "--json"]).output)["store"]
    assert report["database_exists"] is True and report["database_bytes"] > 0
    assert report["schema_version"] == db.SCHEMA_VERSION
    assert report["counts"]["sessions"] == 1 and report["counts"]["prompts"] == 1
    assert report["counts"]["events"] == {"pending": 2, "claimed": 0, "done": 1, "failed": 1}
    human = runner.invoke(cli, ["status"]).output
    assert "events pending" in human and "schema v" in human


def test_migrate_twice(runner):
    first = runner.invoke(cli, ["migrate"])
    assert "applied m001_initial" in first.output
    second = runner.invoke(cli, ["migrate"])
    assert second.exit_code == 0 and "up to date" in second.output


def test_corrupt_database_is_a_clear_error(runner, data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "claude-mem.db").write_bytes(b"garbage" * 1000)
    result = runner.invoke(cli, ["status"])
    assert result.exit_code == 1
    assert "database error" in result.output and "Traceback" not in result.output


def test_settings_show_masks_secrets(runner, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", "sk-ant-api03-verysecretvalue")
    for args in (["settings"], ["settings", "--json"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0
        assert "verysecret" not in result.output and "********" in result.output


def test_settings_set_and_bad_values(runner, data_dir):
    ok = runner.invoke(cli, ["settings", "set", "openai_api_key", "sk-proj-hidden123"])
    assert ok.exit_code == 0 and "hidden123" not in ok.output
    bad = runner.invoke(cli, ["settings", "set", "max_attempts", "lots"])
    assert bad.exit_code == 1 and "max_attempts" in bad.output and "Traceback" not in bad.output
    unknown = runner.invoke(cli, ["settings", "set", "nope", "1"])
    assert unknown.exit_code == 1 and "unknown setting" in unknown.output


def test_corrupt_settings_file_is_reported(runner, data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text("{oops")
    result = runner.invoke(cli, ["settings"])
    assert result.exit_code == 0, result.output  # the defaults are listed, with the warning on stderr
    assert "warning:" in result.stderr and "settings.json" in result.stderr and "not a readable JSON object" in result.stderr
    refused = runner.invoke(cli, ["settings", "set", "max_attempts", "5"])  # never overwrites a file it cannot read
    assert refused.exit_code == 1 and "settings.json" in refused.output
    assert (data_dir / "settings.json").read_text() == "{oops"


def test_installed_console_script_runs(data_dir):
    exe = os.path.join(os.path.dirname(sys.executable), "claude-mem")
    assert os.path.exists(exe), "the package must be installed (make test does pip install -e)"
    out = subprocess.run([exe, "status", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["store"]["data_dir"] == str(data_dir)


@pytest.mark.parametrize("args", [["migrate"], ["status"], ["worker", "start"], ["backup"]])
def test_a_data_dir_that_cannot_exist_is_a_clear_error(runner, tmp_path, monkeypatch, args):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(blocker / "data"))
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_settings_set_help_lists_the_provider_names_from_the_one_list(runner):
    from claude_mem.domain import PROVIDERS

    shown = runner.invoke(cli, ["settings", "set", "--help"]).output
    assert f"provider: {', '.join(PROVIDERS)}" in shown
    assert "log_level: debug, info, warning, error" in shown


def test_status_prints_a_settings_warning_once_when_the_worker_reports_it_too(runner, data_dir, monkeypatch):
    from claude_mem import settings
    from claude_mem.cli import status as status_module

    monkeypatch.setenv("CLAUDE_MEM_MAX_ATTEMPTS", "lots")
    warning = settings.problems()[0]
    running = {"running": True, "pid": 4242, "url": "http://127.0.0.1:1", "reason": "", "data_dir": str(data_dir),
               "health": {"version": "x", "data_dir": str(data_dir), "uptime": 1, "status": "degraded", "queue": {},
                          "provider": {"name": "offline", "ok": True, "reason": ""},
                          "warnings": [warning, "worker-only warning"]}}
    monkeypatch.setattr(status_module, "worker_report", lambda: running)
    flat = " ".join(runner.invoke(cli, ["status"], env={"COLUMNS": "1000"}).output.split())
    assert flat.count("max_attempts = 'lots'") == 1
    assert "settings warning: worker-only warning" in flat  # what only the worker sees is still shown
