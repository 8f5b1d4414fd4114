"""The MCP server (`claude-mem mcp`, DESIGN §6): memory search for Claude Code over stdio.

`stdio` is the server Claude Code runs: JSON-RPC over stdin/stdout with the standard library only, so
any python3 ≥ 3.11 starts it at once. `calls` runs the tools, `answers` turns recall results into
compact plain text (no MCP involved, easy to test). `server` declares the same tools with the `mcp`
SDK: the reference the stdlib server is tested against, and the source of its `catalog.json`.
Named `mcp_server`, not `mcp`, so it can never shadow the SDK package.
"""
