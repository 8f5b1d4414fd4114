"""Console entry point: `claude-mem hook …`, `statusline` and `mcp` take stdlib-only paths, the rest the CLI.

Importing click and rich costs tens of milliseconds; a hook runs on every tool call, so it must
never pay for them.
"""

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from claude_mem.hooks.runner import run_from_argv

        sys.exit(run_from_argv(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "statusline":  # runs every 300 ms: no click either
        from claude_mem.hooks.statusline import run

        sys.exit(run(sys.argv[2:]))
    if sys.argv[1:] == ["mcp"]:  # an MCP client waits for its initialize answer: no click either
        from claude_mem.mcp_server.stdio import main as serve

        serve()
        return
    from claude_mem.cli import cli

    cli()
