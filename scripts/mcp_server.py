"""Claude Code plugin launcher for the MCP server: `.mcp.json` runs `python3 scripts/mcp_server.py`.

Like the hooks, it needs no install: the checkout's `src/` goes first on sys.path, and the server
(`claude_mem.mcp_server.stdio`) needs nothing beyond the standard library, so the memory tools are
there from the very first session, before any venv is built. Search by meaning, which needs the
embedding model, is asked of the running worker. An interpreter older than 3.11 exits 1 with one
line on stderr, which Claude Code shows as the server's failure.
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


def main() -> int:
    from claude_mem.mcp_server.stdio import main as serve

    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
