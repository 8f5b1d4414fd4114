"""`claude-mem statusline`, listed in `--help`. A real call never comes through click: `entry.py`
sends it straight to the stdlib-only `claude_mem.hooks.statusline` (it runs every 300 ms)."""

import click

from claude_mem.cli.group import cli
from claude_mem.hooks.statusline import USAGE, run


@cli.command(help=USAGE.split("\n", 2)[2].replace("\n  ", "\n"), add_help_option=True)
@click.pass_context
def statusline(ctx: click.Context) -> None:
    ctx.exit(run([]))
