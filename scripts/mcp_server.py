"""Claude Code plugin launcher for the MCP server: `.mcp.json` runs `python3 scripts/mcp_server.py`.

Like the hooks, it needs no install: the checkout's `src/` goes first on sys.path. The server needs
the `mcp` package, so it runs with the first interpreter that has it: this one, else the data dir's
venv (`claude_mem.runtime.environment`). On a first run that venv is still being built: the launcher
starts the build if no hook has, and waits for its first stage (the `mcp` package, seconds) inside
Claude Code's start-up window, so the memory tools arrive in the very first session. Without either
it exits 1 with one line on stderr, which Claude Code shows as the server's failure.
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


def start_window() -> float:
    """Seconds this launcher may wait before Claude Code gives up on the server: its connection
    timeout (`MCP_TIMEOUT`, ms, 30 s by default in Claude Code 2.1) less a margin."""
    try:
        timeout = int(os.environ.get("MCP_TIMEOUT") or 0) / 1000
    except ValueError:
        timeout = 0
    return max((timeout if timeout > 0 else 30.0) - 5.0, 0.0)


def wait_for_tools(directory: str, window: float) -> None:
    """On a first run, start the venv build if no hook has yet, and wait (inside Claude Code's start-up
    window) until it can run the server. A server that fails is not retried for 15 minutes; one that
    connects late still brings its tools into the session that started it."""
    import time

    from claude_mem.runtime import autostart, discovery, environment

    began = time.monotonic()
    outcome = autostart.ensure_worker(directory)
    if not outcome.startswith(("bootstrapping", "starting")) and environment.state(directory)["state"] != "building":
        return  # off, failed recently, or a worker that needs no venv: nothing will build it
    while time.monotonic() - began < window and not environment.tools_ready(directory):
        building = environment.state(directory)["state"] == "building"
        # A build just handed the lock writes its progress within a moment; a worker never does.
        if not building and (time.monotonic() - began > 3 or not discovery.lock_held(directory)):
            return
        time.sleep(0.2)


def main() -> int:
    if has_mcp_sdk():
        from claude_mem.mcp_server.server import main as serve

        serve()
        return 0
    from claude_mem import settings
    from claude_mem.runtime import environment

    directory = settings.data_dir()
    if not environment.tools_ready(directory):
        wait_for_tools(directory, start_window())
    if environment.tools_ready(directory):
        python = environment.venv_python(directory)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(part for part in (SRC, env.get("PYTHONPATH")) if part)
        os.execve(python, [python, "-m", "claude_mem.mcp_server"], env)
    sys.stderr.write(
        "claude-mem: the MCP server needs the `mcp` package: %s lacks it and %s is %s; restart Claude Code"
        " when it is built, or install claude-mem-py\n"
        % (sys.executable, environment.venv_dir(directory), environment.describe(environment.state(directory)))
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
