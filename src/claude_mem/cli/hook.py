"""`claude-mem hook …`: the five Claude Code hooks, documented for `--help`.

A real hook call never comes through click: `entry.py` sends `claude-mem hook NAME` straight to
the stdlib-only `claude_mem.hooks.runner` (click and rich cost more than the whole hook budget).
These commands run the same runner, so `python -m claude_mem hook …` and tests behave alike.
"""

import click

from claude_mem.cli import cli

HOOKS: dict[str, str] = {
    "session-start": (
        "SessionStart (startup, resume, clear, compact): record the session and print the memory "
        "context as Claude Code's JSON (hookSpecificOutput.additionalContext)."
    ),
    "user-prompt": (
        "UserPromptSubmit: store the prompt (numbered per session, <private> parts removed, secrets "
        "redacted) and queue it for the observer. A fully private prompt makes the whole turn private."
    ),
    "post-tool": (
        "PostToolUse and PostToolUseFailure: queue the tool call with its input and output or error "
        "(cleaned and capped at max_field_chars). Tools in skip_tools are ignored."
    ),
    "stop": "Stop: queue a summary request for the turn, with Claude's last message.",
    "session-end": "SessionEnd: queue the session's end and mark it completed; finishes well under 1.5 s.",
}


@cli.group()
def hook() -> None:
    """Claude Code hooks: read the hook JSON on stdin, capture it, exit 0.

    Installed by the plugin (hooks/hooks.json) or by hand in Claude Code settings. Every hook
    always exits 0 and prints nothing but its JSON; bad input is logged to logs/hooks.log and a
    cleaned copy kept in quarantine/. When the database is busy for more than 250 ms the event
    is written to spool/ and the worker picks it up later. Projects matching excluded_projects
    are never captured.
    """


def _make(name: str, text: str) -> click.Command:
    @click.pass_context
    def run(ctx: click.Context) -> None:
        from claude_mem.hooks.runner import run_from_argv

        ctx.exit(run_from_argv([name]))

    return click.Command(name, callback=run, help=f"{text}\n\nReads the hook payload (JSON) on stdin.")


for _name, _text in HOOKS.items():
    hook.add_command(_make(_name, _text))
