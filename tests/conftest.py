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
FIXTURES = os.path.join(REPO, "tests", "fixtures")


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
        if name.startswith(("CLAUDE_MEM_", "CLAUDE_PLUGIN_")) or name in ("CLAUDE_PROJECT_DIR", "CLAUDECODE"):
            monkeypatch.delenv(name, raising=False)
    data_dir = tmp_path / "data"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(data_dir))
    # Hooks would start real workers (and build venvs) in every test; worker tests turn it back on.
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")
    monkeypatch.setenv("HOME", str(home))
    yield data_dir


@pytest.fixture
def data_dir(isolated_env):
    return isolated_env


@pytest.fixture
def python() -> str:
    return sys.executable
