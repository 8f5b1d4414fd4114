"""The extension points (`claude_mem.plugins`): observer providers and worker services come from the
entry points of installed distributions, as the test suite's own `fake` provider does; the runtime
package carries no test seam of its own."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from claude_mem import domain, plugins, settings
from claude_mem.cli import cli
from claude_mem.observer.provider import REGISTRY, ProviderError
from claude_mem.observer.service import create_provider
from claude_mem.runtime import discovery
from conftest import REPO
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_prompt, add_session, connect
from test_observer import tool
from test_worker_lifecycle import cli as worker_cli
from test_worker_lifecycle import wait_for, worker_env  # noqa: F401  (worker_env: a fixture)

SRC = os.path.join(REPO, "src", "claude_mem")
# A third party's provider, as its own module: the fake's replies under another name.
ECHO = '''
from fakes.observer_provider import FakeProvider


class EchoProvider(FakeProvider):
    name = "echo"
'''


def test_the_runtime_package_holds_no_test_seam():
    assert "fake" not in domain.PROVIDERS and "fake" not in REGISTRY.factories
    assert "fake" not in settings.SETTINGS["provider"].choices and "fake —" not in settings.SPEC["provider"][1]
    found = []
    for folder, _, names in os.walk(SRC):
        for name in (n for n in names if n.endswith(".py")):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                text = handle.read()
            found += [f"{name}: {needle}" for needle in ("CLAUDE_MEM_TEST", "FAKE_SCRIPT", "FakeProvider") if needle in text]
    assert not found
    # The suite's fake is a plugin like any other: registered by the entry point in tests/plugins/.
    assert "fake" in plugins.names(plugins.PROVIDERS)
    assert isinstance(REGISTRY.create("fake", {}), FakeProvider)


def test_a_plugin_provider_is_a_valid_setting_but_not_listed_as_a_built_in(data_dir, install_plugin):
    install_plugin("claude_mem.providers", "echo", "echo_plugin:EchoProvider", echo_plugin=ECHO)
    settings.update_file({"provider": " Echo "})
    assert settings.read_file()["provider"] == "echo"
    assert settings.load()["provider"] == "echo" and settings.problems() == []
    assert settings.SETTINGS["provider"].choices == tuple(domain.PROVIDERS)
    assert "echo" in settings.SETTINGS["provider"].options()  # the viewer's choices
    assert "echo" not in settings.SPEC["provider"][1]
    listed = CliRunner().invoke(cli, ["settings", "set", "--help"]).output
    assert "provider: auto, claude, anthropic, openai, offline\n" in listed and "echo" not in listed
    with pytest.raises(settings.SettingsError, match=r"offline \(or an installed plugin's name\)"):
        settings.update_file({"provider": "bogus"})
    provider = create_provider(settings.load())
    assert provider.name == "echo" and isinstance(provider, FakeProvider)


def test_a_plugin_provider_that_cannot_load_is_one_clear_error(data_dir, install_plugin):
    install_plugin("claude_mem.providers", "broken", "no_such_module_here:Provider")
    assert settings.coerce("provider", "broken") == "broken"
    with pytest.raises(ProviderError, match=r"plugin 'broken' cannot be loaded \(ModuleNotFoundError"):
        create_provider({**settings.DEFAULTS, "provider": "broken"})


def test_a_plugin_provider_observes_in_a_real_worker(worker_env, install_plugin, monkeypatch):  # noqa: F811
    install_plugin("claude_mem.providers", "echo", "echo_plugin:EchoProvider", echo_plugin=ECHO)
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "echo")
    data_dir = str(worker_env)
    conn = connect(data_dir)
    session = add_session(conn, "s-plugin")
    add_prompt(conn, session, "build it")
    add_event(conn, session, *tool("make build"), key="plugin-1")
    add_event(conn, session, "summarize", {"last_assistant_message": "built", "prompt_number": 1}, "plugin-end")
    worker_cli("worker", "start")
    assert discovery.read_info(data_dir)["provider"] == {"name": "echo"}
    done = "SELECT COUNT(*) FROM pending_events WHERE status NOT IN ('done', 'failed')"
    wait_for(lambda: conn.execute(done).fetchone()[0] == 0, 60, "the queue to drain")
    narratives = [row[0] for row in conn.execute("SELECT narrative FROM observations")]
    conn.close()
    assert narratives and all(text.startswith("The fake observer saw") for text in narratives)
    health = json.loads(worker_cli("worker", "status", "--json").stdout)["health"]
    assert health["provider"]["name"] == "echo" and health["provider"]["ok"]


def test_built_in_names_never_scan_the_installed_distributions(data_dir):
    """The hooks read settings on every call: a built-in provider costs no `importlib.metadata`."""
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from claude_mem import settings;"
             " from claude_mem.runtime import observer_choice; settings.load(); observer_choice.choose(settings.load());"
             " print('importlib.metadata' in sys.modules)")
    env = {**os.environ, "CLAUDE_MEM_PROVIDER": "Offline"}
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, os.path.join(REPO, "src")], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False"], result.stderr
