"""One provider registry, one answer: the worker, `status`, `/health` and the session-start context
header resolve the `provider` setting the same way and name the observer that actually runs."""

import json

import pytest
from click.testing import CliRunner

from claude_mem import domain, settings
from claude_mem.cli import cli
from claude_mem.cli import status as status_module
from claude_mem.observer.provider import REGISTRY, ProviderError
from claude_mem.observer.providers import choose
from claude_mem.observer.service import create_provider
from claude_mem.recall import context
from claude_mem.runtime import discovery, observer_choice
from claude_mem.store import db
from recall_seed import seed_project
from test_worker_lifecycle import cli as worker_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (fixture)


@pytest.fixture
def no_claude(monkeypatch, tmp_path):
    """No Claude Code CLI and no Anthropic key: `auto` means offline, whatever the machine has."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_MEM_CLI_PATH", str(tmp_path / "no-claude"))


def test_every_provider_name_has_a_factory_and_every_factory_a_name():
    assert set(REGISTRY.factories) == set(domain.PROVIDERS)
    assert set(settings.SETTINGS["provider"].choices) == set(domain.PROVIDERS)


@pytest.mark.parametrize(("raw", "expected"), [("Claude", "claude"), (" fake ", "fake"), ("OFFLINE", "offline")])
def test_a_name_means_the_same_provider_in_the_worker_status_health_and_context(
        data_dir, monkeypatch, no_claude, raw, expected):
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", raw)
    values = settings.load()
    assert values["provider"] == expected and settings.problems() == []
    assert choose(values, probe=False) == (expected, observer_choice.SET_BY_SETTING)
    assert observer_choice.choose(values)[0] == expected  # the hook-side rule (no probe, no subprocess)
    assert REGISTRY.normalise(raw) == expected
    if expected != "claude":  # creating `claude` needs the SDK's CLI; its name is checked above
        assert create_provider(values).name == expected
    report = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    assert report["observer"]["selected"]["name"] == expected
    assert context.observer_name(str(data_dir), values) == expected


def test_an_unknown_name_is_one_clear_error(data_dir, monkeypatch, no_claude):
    with pytest.raises(ProviderError, match="unknown observer provider 'bogus'"):
        create_provider({**settings.DEFAULTS, "provider": "bogus"})
    with pytest.raises(ProviderError, match="unknown observer provider"):
        choose({"provider": "bogus"})
    with pytest.raises(settings.SettingsError, match="not one of auto, claude"):
        settings.update_file({"provider": "bogus"})
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "bogus")  # already in the environment: refused, reported, not used
    assert settings.load()["provider"] == "auto"
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    assert "provider = 'bogus' from env (CLAUDE_MEM_PROVIDER) is refused" in flat
    assert "with these settings the observer would be offline" in flat
    report = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    assert any("CLAUDE_MEM_PROVIDER" in warning for warning in report["warnings"])


def test_status_without_a_worker_says_it_evaluated_the_settings(data_dir, monkeypatch, no_claude):
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "auto")
    result = CliRunner().invoke(cli, ["status"])
    flat = " ".join(result.output.split())
    assert "observer: no worker running; with these settings the observer would be offline" in flat
    assert json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)["observer"]["selected"]["source"] == "settings"


def test_status_shows_what_the_running_worker_reports(data_dir, monkeypatch, no_claude):
    """The worker may observe with a key it inherited; the CLI's own environment must not overrule it."""
    running = {"running": True, "pid": 4242, "url": "http://127.0.0.1:1", "reason": "", "data_dir": str(data_dir),
               "health": {"version": "x", "data_dir": str(data_dir), "uptime": 1, "status": "ok", "queue": {},
                          "provider": {"name": "anthropic", "ok": True, "reason": ""}}}
    monkeypatch.setattr(status_module, "worker_report", lambda: running)
    report = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    assert report["observer"]["selected"] == {"name": "anthropic", "ok": True, "source": "worker", "detail": "",
                                              "reason": "reported by the running worker (pid 4242)"}
    text = " ".join(CliRunner().invoke(cli, ["status"]).output.split())
    assert "observer: anthropic (reported by the running worker (pid 4242))" in text
    assert "cannot work" not in text and "no worker running" not in text


def test_a_real_worker_is_what_status_and_the_context_header_name(worker_env, monkeypatch, no_claude):  # noqa: F811
    """Started with CLAUDE_MEM_PROVIDER=offline, the worker records `offline`: the header names it and
    warns, and `status` reports it, though the hook's and the CLI's own settings say otherwise."""
    data_dir = str(worker_env)
    conn = db.connect(db.db_path(data_dir))
    seed_project(conn, "/home/dev/proj", 3)
    worker_cli("worker", "start")  # CLAUDE_MEM_PROVIDER=offline (worker_env)
    info = discovery.read_info(data_dir)
    assert info["provider"] == {"name": "offline"}
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "openai")  # the hook's and the CLI's own environment differ
    result = context.build(conn, "/home/dev/proj", values=settings.load(), data_dir=data_dir)
    conn.close()
    assert "(observer: offline)" in result["text"] and "observer is `offline`" in result["text"]
    assert "observer offline" in result["system_message"]
    report = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    assert report["observer"]["selected"]["name"] == "offline" and report["observer"]["selected"]["source"] == "worker"
    assert report["worker"]["health"]["provider"]["name"] == "offline"
