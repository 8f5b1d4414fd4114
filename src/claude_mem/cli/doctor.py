"""`claude-mem doctor`: one line per check — ok, info, warning or problem with how to fix it."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from claude_mem.cli import checks, checks_claude, checks_runtime, checks_team
from claude_mem.cli.checks import INFO, OK, PROBLEM, WARNING, Check, Context
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json

CHECKS = (checks.python_checks, checks.data_dir_checks, checks.database_checks, checks_runtime.settings_checks,
          checks_runtime.worker_checks, checks_runtime.observer_checks, checks_claude.hooks_checks,
          checks_claude.leftovers_checks, checks_runtime.environment_checks, checks_runtime.search_checks,
          checks_team.team_checks, checks_claude.original_checks, checks_claude.auto_memory_checks)
MARKS = {OK: ("✓", "green"), INFO: ("·", "cyan"), WARNING: ("!", "yellow"), PROBLEM: ("✗", "red")}


def run_checks(ctx: Context | None = None) -> list[Check]:
    context = ctx or checks.gather()
    return [check for run in CHECKS for check in run(context)]


def has_problem(found: list[Check]) -> bool:
    return any(check.status == PROBLEM for check in found)


def render(found: list[Check]) -> None:
    out = console()
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for check in found:
        mark, style = MARKS[check.status]
        text = Text(check.detail)
        if check.fix and check.status != OK:
            text.append(f"\n→ {check.fix}", style=style)
        table.add_row(Text(mark, style=f"bold {style}"), check.name, text)
    out.print(table)
    problems = sum(check.status == PROBLEM for check in found)
    warnings = sum(check.status == WARNING for check in found)
    if problems or warnings:
        out.print(Text(f"{problems} problem(s), {warnings} warning(s); `claude-mem repair` fixes what it can",
                       style="bold red" if problems else "bold yellow"))
    else:
        out.print(Text("all good", style="bold green"))


@click.command()
@json_option("Print the checks as JSON: a list of {name, status, detail, fix}.")
def doctor(as_json: bool) -> None:
    """Check the installation: one line per check, with how to fix what is wrong.

    Python (this one and the `python3` the plugin's hooks run with), the data dir and free disk, the
    database (read-only: quick_check, schema, full-text indexes), settings, the worker, the observer
    (which provider and why, CLI login, API key, base URL reachable), hook registration (plugin or
    settings file) — and when nothing is registered, what stays on disk and how to remove it — the
    worker's environment (the interpreter `claude-mem install` recorded, the plugin's venv and its
    build's progress), the search model, the original claude-mem if it is installed beside us, and
    Claude Code's own auto memory for this project (on or off, where, files indexed, tokens at start).
    Changes nothing, except that a worker whose plugin was uninstalled is stopped.
    Exit code 1 when a check finds a problem.
    """
    found = run_checks()
    if as_json:
        emit_json([check.as_dict() for check in found])
    else:
        render(found)
    raise SystemExit(1 if has_problem(found) else 0)
