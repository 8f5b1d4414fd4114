"""claude-mem (Python): persistent memory for Claude Code.

This module stays import-free: the hook path imports it on every tool call.
"""

__version__ = "0.1.0"
