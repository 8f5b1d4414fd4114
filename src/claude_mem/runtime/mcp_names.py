"""How Claude Code names our MCP tools: as the plugin's, or as a server registered by `claude-mem install`.

A plugin's server `memory` in plugin `persistent-memory` gives `mcp__plugin_persistent-memory_memory__search`;
a server registered directly under `memory` gives `mcp__memory__search` (DESIGN §1). The commands
`claude-mem install` writes (hooks and the MCP server) say so explicitly with `CLAUDE_MEM_MCP_SERVER=<name>`
in their environment; without it, the plugin's names are meant. Stdlib only: the hooks import this.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy only: the hooks never pay for the import
    from collections.abc import Mapping

SERVER_NAME = "memory"
PLUGIN_PREFIX = "mcp__plugin_persistent-memory_%s__" % SERVER_NAME
SERVER_ENV = "CLAUDE_MEM_MCP_SERVER"
NAME_MAX = 64


def valid_server_name(name: str) -> bool:
    """A name Claude Code keeps as it is in tool names (letters, digits, `_` and `-`)."""
    return 0 < len(name) <= NAME_MAX and name.isascii() and all(c.isalnum() or c in "_-" for c in name)


def tool_prefix(environ: "Mapping[str, str]" = os.environ) -> str:
    """`mcp__<server>__` for a server named in `CLAUDE_MEM_MCP_SERVER`, else the plugin's prefix."""
    name = environ.get(SERVER_ENV) or ""
    return "mcp__%s__" % name if valid_server_name(name) else PLUGIN_PREFIX
