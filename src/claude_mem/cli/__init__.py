"""The `claude-mem` command line. Each concern lives in its own module and registers on the group."""

from claude_mem.cli import exporting as _exporting  # noqa: F401  (importing a module registers its commands)
from claude_mem.cli import hook as _hook  # noqa: F401
from claude_mem.cli import importing as _importing  # noqa: F401
from claude_mem.cli import install as _install  # noqa: F401
from claude_mem.cli import mcp_cmd as _mcp  # noqa: F401
from claude_mem.cli import projects as _projects  # noqa: F401
from claude_mem.cli import queue as _queue  # noqa: F401
from claude_mem.cli import recall as _recall  # noqa: F401
from claude_mem.cli import settings_cmd as _settings  # noqa: F401
from claude_mem.cli import status as _status  # noqa: F401
from claude_mem.cli import statusline_cmd as _statusline  # noqa: F401
from claude_mem.cli import team as _team  # noqa: F401
from claude_mem.cli import viewer as _viewer  # noqa: F401
from claude_mem.cli import worker as _worker  # noqa: F401
from claude_mem.cli.group import cli

__all__ = ["cli"]
