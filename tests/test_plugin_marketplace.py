"""The repository as Claude Code sees it: a plugin named `persistent-memory` (never `claude-…`, which
Claude Code reserves for Anthropic) with an icon, listed by the marketplace at its root. The real CLI
bundled with claude-agent-sdk validates it, installs it from a local marketplace into a throwaway HOME
and runs a session with it, offline against the loopback fake Messages API."""

import json
import os
import shutil
import struct
import subprocess

import pytest

from claude_mem import __version__
from claude_support import claude_cli, cli_env, run_edit_session
from conftest import REPO, require_executable

PLUGIN = "persistent-memory"
MARKETPLACE = "persistent-memory"
MANIFESTS = os.path.join(REPO, ".claude-plugin")


def manifest(name: str) -> dict:
    with open(os.path.join(MANIFESTS, name), encoding="utf-8") as handle:
        return json.load(handle)


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def plugin_cli(*args: str, home: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`claude plugin ARGS…` with HOME in a temp dir, nothing sent anywhere."""
    env = {**os.environ, **cli_env("http://127.0.0.1:9", home)}
    env.pop("CLAUDECODE", None)
    return subprocess.run([claude_cli(), "plugin", *args], env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def fresh_clone(destination: str) -> str:
    """The files a clone of this checkout holds (tracked and not ignored: no .git, no .venv)."""
    git = require_executable("git")
    listed = subprocess.run([git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = os.path.join(REPO, relative)
        if os.path.isfile(source):  # a tracked file deleted in the working tree is not there
            os.makedirs(os.path.dirname(os.path.join(destination, relative)), exist_ok=True)
            shutil.copy2(source, os.path.join(destination, relative))
    return destination


def test_plugin_and_marketplace_manifests_agree():
    plugin, marketplace = manifest("plugin.json"), manifest("marketplace.json")
    assert plugin["name"] == PLUGIN and plugin["version"] == __version__
    assert marketplace["name"] == MARKETPLACE and marketplace["owner"]["name"]
    [entry] = marketplace["plugins"]
    assert entry["name"] == PLUGIN and entry["version"] == __version__
    assert entry["source"] == "./"  # the repository root is the plugin
    with open(os.path.join(REPO, ".mcp.json"), encoding="utf-8") as handle:
        assert list(json.load(handle)["mcpServers"]) == ["memory"]


def test_icon_is_a_square_png_the_directory_accepts():
    path = os.path.join(MANIFESTS, "icon.png")
    width, height = png_size(path)
    assert width == height and 512 <= width <= 2048
    assert os.path.getsize(path) < 2 * 1024 * 1024


def test_claude_plugin_validate_passes_strictly(tmp_path):
    """`claude plugin validate .` reads the marketplace and the plugin it lists; `--strict` makes any
    warning (a missing icon, description or README install line) an error."""
    for target in (REPO, os.path.join(MANIFESTS, "plugin.json")):
        result = plugin_cli("validate", target, "--strict", "--json", home=str(tmp_path / "home"))
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        report = json.loads(result.stdout)
        assert report["success"] is True
        assert (report["manifest"]["errors"], report["manifest"]["warnings"]) == ([], [])
        assert report["directory"]["findings"] == []  # ICON_MISSING and the like
        assert report["advice"] == []
        assert [server["name"] for server in report["provides"]["mcpServers"]] == ["memory"]
    assert json.loads(plugin_cli("validate", REPO, "--json", home=str(tmp_path / "home")).stdout)["manifest"][
        "type"] == "marketplace"


@pytest.mark.slow
def test_install_from_the_local_marketplace_then_a_session_is_captured(data_dir, tmp_path):
    home = str(tmp_path / "home")
    clone = fresh_clone(str(tmp_path / "clone"))
    added = plugin_cli("marketplace", "add", clone, home=home)
    assert added.returncode == 0, added.stdout + added.stderr
    assert f"Successfully added marketplace: {MARKETPLACE}" in added.stdout
    installed = plugin_cli("install", f"{PLUGIN}@{MARKETPLACE}", home=home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listing = plugin_cli("list", "--json", home=home)
    assert listing.returncode == 0, listing.stderr
    [plugin] = [entry for entry in json.loads(listing.stdout) if entry["id"] == f"{PLUGIN}@{MARKETPLACE}"]
    assert plugin["enabled"] is True and plugin["version"] == __version__ and plugin["scope"] == "user"
    assert list(plugin["mcpServers"]) == ["memory"]
    # Installing copies the folder into HOME's plugin cache (without .git); a marketplace that is a
    # local folder is still read at every start, and its plugin loaded from there.
    assert plugin["installPath"].startswith(os.path.join(home, ".claude", "plugins", "cache") + os.sep)
    assert os.path.isfile(os.path.join(plugin["installPath"], "scripts", "hook.py"))
    assert not os.path.exists(os.path.join(plugin["installPath"], ".git"))
    assert plugin["readFromFolder"] == clone

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    run_edit_session(project, home, data_dir, plugin_dir=None)  # no --plugin-dir: the installed plugin
