"""`claude-mem mcp`: the MCP server on stdin/stdout, for Claude Code (or any MCP client)."""


from claude_mem.cli.group import cli


@cli.command()
def mcp() -> None:
    """Serve memory search to Claude Code over MCP (stdio) until the client disconnects.

    Tools: search (ids and titles by keywords), timeline (what happened around one id) and
    get_observations (full text of chosen ids). The plugin's .mcp.json starts this on its own;
    run it by hand only to wire claude-mem into another MCP client, e.g.
    `claude mcp add memory -- claude-mem mcp`. Searches default to the project of the
    current directory (CLAUDE_PROJECT_DIR when set). Stdout carries only MCP messages.
    """
    from claude_mem.mcp_server.stdio import main  # stdlib only: starts at once

    main()
