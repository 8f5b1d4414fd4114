"""Claude Code plugin launcher for the MCP server: `.mcp.json` runs `python3 scripts/mcp_server.py`.

Like the hooks, it needs no install: the checkout's `src/` goes first on sys.path. The server needs
the `mcp` package, so it runs with the first interpreter that has it: this one, else the data dir's
venv that the hooks build on the first session start (`hooks/autostart.py`). Without either it
exits 1 with one line on stderr, which Claude Code shows as the server's failure.
"""

import sys

if sys.version_info < (3, 11):
    sys.stderr.write("claude-mem: the MCP server needs Python >= 3.11 as python3 (found %d.%d)\n" % sys.version_info[:2])
    sys.exit(1)

import os  # noqa: E402

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(SCRIPTS), "src")
# The script's own directory comes first on sys.path; nothing in it may pose as a package.
sys.path[:] = [SRC] + [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != SCRIPTS]


def has_mcp_sdk() -> bool:
    """True when this interpreter can import the mcp 2.x server API."""
    try:
        from mcp.server import MCPServer  # noqa: F401
    except Exception:  # noqa: BLE001 - missing, too old (1.x has no MCPServer) or broken: all mean "not here"
        return False
    return True


def main() -> int:
    if has_mcp_sdk():
        from claude_mem.mcp_server.server import main as serve

        serve()
        return 0
    from claude_mem import settings
    from claude_mem.runtime import autostart

    directory = settings.data_dir()
    if autostart.venv_ready(directory):
        python = autostart.venv_python(directory)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(part for part in (SRC, env.get("PYTHONPATH")) if part)
        os.execve(python, [python, "-m", "claude_mem.mcp_server"], env)
    sys.stderr.write(
        "claude-mem: the MCP server needs the `mcp` package: %s lacks it and %s is not built yet (the plugin's"
        " hooks build it after the first session start; restart Claude Code in a few minutes) - or install"
        " claude-mem-py\n" % (sys.executable, os.path.join(directory, autostart.VENV_DIRNAME))
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
