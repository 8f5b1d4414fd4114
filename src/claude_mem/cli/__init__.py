"""The `claude-mem` command line. Each concern lives in its own module and registers on the group, which
loads a module only when one of its commands runs (`group.LAZY`)."""

from claude_mem.cli.group import cli

__all__ = ["cli"]
