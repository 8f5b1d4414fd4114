"""`python -m claude_mem.mcp_server`: the MCP server over stdio (what `claude-mem mcp` runs). Stdlib only."""

from claude_mem.mcp_server.stdio import main

main()
