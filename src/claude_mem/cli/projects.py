"""`claude-mem projects [--json]` and `claude-mem projects merge A B [--yes]`."""

import sys

import click
from rich.table import Table

from claude_mem import project as identity
from claude_mem import store
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json
from claude_mem.cli.recall import opened
from claude_mem.domain import utc_now
from claude_mem.recall.common import RecallError, known_projects, resolve_project
from claude_mem.store import projects as store_projects

MOVED = ("sessions", "prompts", "events", "observations", "summaries")


@cli.group("projects", invoke_without_command=True)
@json_option("Print JSON instead of a table.")
@click.pass_context
def projects(ctx: click.Context, as_json: bool) -> None:
    """The projects memory knows: key (the repository root), name, remote, sessions, observations,
    last activity.

    A project is a repository (its worktrees included) or a directory outside git. Its remote is
    recorded too, so a checkout of the same remote at another path (moved or cloned again) keeps
    using the project first seen; `projects merge` joins two that are one.
    """
    if ctx.invoked_subcommand is not None:
        return
    with opened() as conn:
        rows = store_projects.listing(conn)
    names = identity.display_names([row["key"] for row in rows])
    for row in rows:
        row["name"] = names[row["key"]]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No projects yet: memory starts with the first Claude Code session.")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("name", "key", "remote", "sessions", "observations", "last activity"):
        long = column in ("key", "remote")  # paths and URLs fold to fit the terminal; the rest stays whole
        table.add_column(column, no_wrap=not long, overflow="fold" if long else "ellipsis", ratio=1 if long else None,
                         justify="right" if column in ("sessions", "observations") else "left")
    for row in rows:
        table.add_row(row["name"], row["key"], row["remote"] or "-", str(row["sessions"]), str(row["observations"]),
                      (row["last_activity"] or "-")[:16].replace("T", " "))
    console().print(table)


def _interactive() -> bool:
    """Whether someone can answer a question (stdin is a terminal)."""
    return sys.stdin.isatty()


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[kind]} {kind if counts[kind] != 1 else kind[:-1]}" for kind in MOVED)


@projects.command("merge")
@click.argument("source", metavar="A")
@click.argument("target", metavar="B")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (needed without a terminal).")
def merge(source: str, target: str, yes: bool) -> None:
    """Join project A into project B: everything of A (sessions with their prompts and events,
    observations, summaries) takes B's key, and A's path and remote resolve to B from now on.

    A and B: a project's name (as `claude-mem projects` shows it), its key, or a path inside it.
    Asks for confirmation, naming what moves; without a terminal, pass --yes.
    """
    with opened() as conn:
        source_key = resolve_project(conn, source)
        target_key = resolve_project(conn, target)
        if source_key is None or target_key is None:
            raise RecallError("name two projects: claude-mem projects merge A B")
        if source_key == target_key:
            raise RecallError(f"{source!r} and {target!r} are the same project ({target_key})")
        names = identity.display_names([*known_projects(conn), source_key, target_key])
        counts = store_projects.merge_counts(conn, source_key)
        what = (f"{names[source_key]} ({source_key}) into {names[target_key]} ({target_key}): "
                f"{_counts_text(counts)}")
        if not yes:
            if not _interactive():
                raise click.ClickException(f"merging {what} needs your confirmation: run it in a terminal or pass --yes")
            click.confirm(f"Merge {what}?", abort=True, err=True)
        with store.transaction(conn):
            store_projects.merge(conn, source_key, target_key, utc_now())
    click.echo(f"Merged {what}.")
