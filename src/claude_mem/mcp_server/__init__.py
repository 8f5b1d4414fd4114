"""The MCP server (`claude-mem mcp`, DESIGN §6): memory search for Claude Code over stdio.

`answers` turns recall results into compact plain text (no MCP involved, easy to test);
`server` declares the tools, their parameters and the workflow instructions with the `mcp` SDK.
Named `mcp_server`, not `mcp`, so it can never shadow the SDK package.
"""
