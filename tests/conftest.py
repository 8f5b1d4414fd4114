"""Every test runs against its own data dir and HOME; nothing touches the machine's real ones."""

import os
import shutil
import sys

import pytest
from hypothesis import settings as hypothesis_settings

hypothesis_settings.register_profile("ci", max_examples=500, deadline=None)
hypothesis_settings.register_profile("dev", max_examples=100, deadline=None)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")

IN_CI = bool(os.environ.get("CI"))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")
FIXTURES = os.path.join(TESTS, "fixtures")
# The test suite's own distribution (its metadata only): it registers the `fake` observer provider
# (tests/fakes/observer_provider.py) as an entry point, as any plugin would. On the path of this
# process and, through PYTHONPATH with tests/ itself, of every worker and CLI the tests start.
PLUGINS = os.path.join(TESTS, "plugins")
if PLUGINS not in sys.path:
    sys.path.append(PLUGINS)


def require(condition: bool, reason: str) -> None:
    """Skip when something this test needs is missing — but fail instead under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def require_executable(name: str) -> str:
    path = shutil.which(name)
    require(path is not None, f"{name} is not installed")
    return path  # type: ignore[return-value]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Point the data dir and HOME at temp dirs and drop any CLAUDE_MEM_* or Claude Code vars."""
    for name in list(os.environ):
        if name.startswith(("CLAUDE_MEM_", "CLAUDE_PLUGIN_")) or name in ("CLAUDE_MEM", "CLAUDE_PROJECT_DIR", "CLAUDECODE"):
            monkeypatch.delenv(name, raising=False)
    data_dir = tmp_path / "data"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(data_dir))
    # Hooks would start real workers (and build venvs) in every test; worker tests turn it back on.
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")
    monkeypatch.setenv("HOME", str(home))
    runtime = tmp_path / "runtime"  # where a hook keeps events a full or read-only data dir cannot take
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    inherited = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part not in ("", PLUGINS, TESTS)]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([PLUGINS, TESTS, *inherited]))
    # A test edits a file and reads memory again at once, in one process: a worker would look again
    # after `STATE_TTL` seconds, a test must look now (test_freshness checks the memo itself).
    from claude_mem.recall import freshness

    monkeypatch.setattr(freshness, "STATE_TTL", 0.0)
    yield data_dir


@pytest.fixture
def data_dir(isolated_env):
    return isolated_env


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def install_plugin(tmp_path, monkeypatch):
    """`install_plugin(group, name, "module:attr", **modules)` makes a distribution with that one
    entry point (and the modules given as `name=source`) visible to this process and to the
    processes it starts, for this test only."""

    def install(group: str, name: str, target: str, **modules: str) -> str:
        distribution = "plugin_" + "".join(c if c.isalnum() else "_" for c in f"{group}_{name}")
        folder = tmp_path / "plugins" / distribution
        info = folder / f"{distribution}-1.0.dist-info"  # one distribution per entry point: names stay unique
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n")
        for module, source in modules.items():
            (folder / f"{module}.py").write_text(source)
        monkeypatch.syspath_prepend(str(folder))
        monkeypatch.setenv("PYTHONPATH", str(folder) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        return str(folder)

    return install
