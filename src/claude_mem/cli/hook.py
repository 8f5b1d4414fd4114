"""`claude-mem hook …`: the five Claude Code hooks, documented for `--help`.

A real hook call never comes through click: `entry.py` sends `claude-mem hook NAME` straight to
the stdlib-only `claude_mem.hooks.runner` (click and rich cost more than the whole hook budget).
These commands run the same runner, so `python -m claude_mem hook …` and tests behave alike.
"""

import click

from claude_mem.cli.group import cli
from claude_mem.hooks.runner import HOOK_HELP, HOOK_INTRO, run_from_argv


@cli.group(help=HOOK_INTRO)
def hook() -> None:
    pass


def _make(name: str, text: str) -> click.Command:
    @click.pass_context
    def run(ctx: click.Context) -> None:
        ctx.exit(run_from_argv([name]))

    return click.Command(name, callback=run, help=f"{text}\n\nReads the hook payload (JSON) on stdin.")


for _name, _text in HOOK_HELP.items():
    hook.add_command(_make(_name, _text))
