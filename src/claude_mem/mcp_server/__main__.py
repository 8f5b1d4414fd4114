"""`python -m claude_mem.mcp_server`: the MCP server over stdio (what `claude-mem mcp` runs)."""

import sys

try:
    from claude_mem.mcp_server.server import main
except ImportError as exc:  # e.g. a venv built before mcp became a dependency
    sys.stderr.write(f"claude-mem: the MCP server cannot start: {exc}; reinstall claude-mem-py (or remove the"
                     " data dir's venv so the hooks rebuild it)\n")
    sys.exit(1)

main()
