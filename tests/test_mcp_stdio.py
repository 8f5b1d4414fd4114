"""The MCP server as a real subprocess over stdio, driven by the `mcp` SDK's client: `python -m`,
`claude-mem mcp`, and the plugin's launcher with the interpreters it may meet (this one, one without
site-packages, the system python3)."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from mcp import Client, StdioServerParameters

from claude_mem.runtime import environment
from conftest import REPO, require
from mcp_support import seed

LAUNCHER = os.path.join(REPO, "scripts", "mcp_server.py")


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "shop"
    (path / ".git").mkdir(parents=True)
    return str(path)


def server_env(data_dir, **extra: str) -> dict[str, str]:
    """What a stdio server gets: a small inherited environment (the SDK passes few variables) plus ours.
    Autostart off: a launcher that finds no environment would start building one (and a worker)."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
            "CLAUDE_MEM_AUTOSTART": "false", **extra}


def session(command: str, args: list[str], env: dict[str, str], cwd: str) -> tuple[list[str], str, str]:
    """Tool names, the search result and the get_observations result of one stdio session."""
    async def run() -> tuple[list[str], str, str]:
        params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
        async with Client(params, read_timeout_seconds=60) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            found = await client.call_tool("search", {"query": "spool ingest"})
            detail = await client.call_tool("get_observations", {"ids": [16]})
            assert not found.is_error and not detail.is_error
            return names, found.content[0].text, detail.content[0].text

    return asyncio.run(asyncio.wait_for(run(), timeout=90))


def check(result: tuple[list[str], str, str]) -> None:
    names, found, detail = result
    assert names == ["get_observations", "search", "timeline"]
    assert found.startswith('Search "spool ingest" in project shop:') and "#16 " in found
    assert detail.splitlines()[1] == "title: Spool files are renamed before ingest so no line is read twice"


@pytest.mark.slow
def test_python_m_over_stdio(data_dir, project):
    seed(data_dir, project, project + "-other")
    check(session(sys.executable, ["-m", "claude_mem.mcp_server"], server_env(data_dir), project))


@pytest.mark.slow
def test_claude_mem_mcp_over_stdio(data_dir, project, tmp_path):
    seed(data_dir, project, project + "-other")
    entry = os.path.join(os.path.dirname(sys.executable), "claude-mem")
    require(os.path.exists(entry), "the claude-mem entry point is not installed in this environment")
    # CLAUDE_PROJECT_DIR names the project even when the server runs elsewhere.
    check(session(entry, ["mcp"], server_env(data_dir, CLAUDE_PROJECT_DIR=project), str(tmp_path)))


@pytest.mark.slow
def test_launcher_runs_with_an_interpreter_that_has_mcp(data_dir, project):
    seed(data_dir, project, project + "-other")
    check(session(sys.executable, [LAUNCHER], server_env(data_dir), project))


@pytest.mark.slow
def test_launcher_runs_on_the_standard_library_alone(data_dir, project):
    """`-I -S` leaves this interpreter without site-packages, like a bare system python3 before any venv
    exists: the server answers all the same, at once."""
    seed(data_dir, project, project + "-other")
    probe = subprocess.run([sys.executable, "-I", "-S", "-c", "import mcp"], capture_output=True, timeout=30)
    assert probe.returncode != 0
    check(session(sys.executable, ["-I", "-S", LAUNCHER], server_env(data_dir), project))


@pytest.mark.slow
def test_launcher_runs_with_the_system_python(data_dir, project):
    system = shutil.which("python3", path="/usr/bin:/bin")
    require(system is not None and subprocess.run([system, "-c", "import sys; assert sys.version_info >= (3, 11)"],
                                                  capture_output=True, timeout=30).returncode == 0,
            "no system python3 >= 3.11 in /usr/bin")
    seed(data_dir, project, project + "-other")
    check(session(system, [LAUNCHER], server_env(data_dir), project))


def test_launcher_after_a_failed_build_serves_at_once(data_dir, project):
    """Autostart on, the venv build failed a moment ago: the server does not need it, and answers."""
    os.makedirs(data_dir)
    with open(os.path.join(data_dir, environment.BOOTSTRAP_FAILED), "w") as handle:
        handle.write("2026-11-23T10:00:00Z\n")
    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    began = time.monotonic()
    result = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], env=server_env(data_dir, CLAUDE_MEM_AUTOSTART="true"),
                            cwd=project, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert time.monotonic() - began < 10
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [tool["name"] for tool in replies[1]["result"]["tools"]] == ["search", "timeline", "get_observations"]


def test_launcher_refuses_an_old_python_in_one_line():
    """The guard runs before anything else; an old interpreter is emulated by its version tuple."""
    code = "import sys; sys.version_info = (3, 9, 18); exec(compile(open(sys.argv[1]).read(), sys.argv[1], 'exec'))"
    result = subprocess.run([sys.executable, "-c", code, LAUNCHER], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == "claude-mem: the MCP server needs Python >= 3.11 as python3 (found 3.9)\n"


def test_the_plugin_declares_the_server():
    with open(os.path.join(REPO, ".mcp.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    assert list(config["mcpServers"]) == ["memory"]  # in plugin "persistent-memory": mcp__plugin_persistent-memory_memory__*
    server = config["mcpServers"]["memory"]
    assert server["command"] == "python3"
    assert server["args"] == ["${CLAUDE_PLUGIN_ROOT}/scripts/mcp_server.py"]
    with open(os.path.join(REPO, ".claude-plugin", "plugin.json"), encoding="utf-8") as handle:
        assert json.load(handle)["name"] == "persistent-memory"
    assert os.path.exists(LAUNCHER)
    # A script named like the SDK would shadow it: sys.path[0] is the script's own directory.
    assert not os.path.exists(os.path.join(REPO, "scripts", "mcp.py"))
