import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from claude_mem import __version__
from claude_mem.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


def test_version(runner):
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_help_explains_every_command(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name, command in cli.commands.items():
        assert name in result.output
        assert (command.help or "").strip(), f"{name} has no help text"
        sub = runner.invoke(cli, [name, "--help"])
        assert sub.exit_code == 0 and "Usage:" in sub.output


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
