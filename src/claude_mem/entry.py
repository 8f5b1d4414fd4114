"""Console entry point: `claude-mem hook …` takes the stdlib-only path, everything else the CLI.

Importing click and rich costs tens of milliseconds; a hook runs on every tool call, so it must
never pay for them.
"""

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from claude_mem.hooks.runner import run_from_argv

        sys.exit(run_from_argv(sys.argv[2:]))
    from claude_mem.cli import cli

    cli()
