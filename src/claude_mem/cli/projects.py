"""`claude-mem projects [--json]`, `projects merge A B [--yes]` and `projects exclude|include [PATH]`."""

import glob
import os
import sys

import click
from rich.table import Table

from claude_mem import project as identity
from claude_mem import settings, store
from claude_mem.capture.payload import excluded
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
    patterns = _excluded_patterns()
    for row in rows:
        row["name"] = names[row["key"]]
        row["excluded"] = excluded(row["key"], "", patterns)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No projects yet: memory starts with the first Claude Code session.")
    else:
        table = Table(show_header=True, header_style="bold")
        for column in ("name", "key", "remote", "sessions", "observations", "last activity"):
            long = column in ("key", "remote")  # paths and URLs fold to fit the terminal; the rest stays whole
            table.add_column(column, no_wrap=not long, overflow="fold" if long else "ellipsis",
                             ratio=1 if long else None, justify="right" if column in ("sessions", "observations") else "left")
        for row in rows:
            table.add_row(row["name"] + (" (excluded)" if row["excluded"] else ""), row["key"], row["remote"] or "-",
                          str(row["sessions"]), str(row["observations"]), (row["last_activity"] or "-")[:16].replace("T", " "))
        console().print(table)
    if patterns:
        click.echo(f"Never captured (excluded_projects): {', '.join(patterns)}")


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


def _excluded_patterns() -> list[str]:
    """The `excluded_projects` globs in effect (environment, else settings.json)."""
    return [str(pattern) for pattern in settings.load().get("excluded_projects") or []]


def _project_of(path: str) -> str:
    """The project key the hooks compute for a session in `path` (a directory that exists)."""
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(full):
        raise click.ClickException(f"not a directory: {path}")
    return identity.identity(full, {})[0]


def _file_patterns() -> list[str]:
    return [str(pattern) for pattern in settings.read_file().get("excluded_projects") or []]


def _save(patterns: list[str]) -> None:
    settings.update_file({"excluded_projects": patterns})
    env_name = settings.ENV_PREFIX + "EXCLUDED_PROJECTS"
    if settings.source_of("excluded_projects") == "env":
        click.echo(f"note: {env_name} is set in the environment and overrides settings.json", err=True)


def _report(as_json: bool, action: str, key: str, changed: bool, text: str) -> None:
    if as_json:
        emit_json({"action": action, "project": key, "changed": changed, "excluded": excluded(key, "", _excluded_patterns()),
                   "excluded_projects": _excluded_patterns()})
    else:
        click.echo(text)


@projects.command("exclude")
@click.argument("path", default=".", required=False)
@json_option("Print what was done as JSON.")
def exclude(path: str, as_json: bool) -> None:
    """Never capture the project at PATH (default: the current directory) and show it no memory.

    PATH is resolved to its project as the hooks resolve a session's directory (the repository root,
    worktrees included) and added to the `excluded_projects` setting in settings.json. The hooks then
    skip every session there before touching the store. Memory already stored for it stays: `claude-mem
    forget --project KEY` deletes it. `projects include PATH` undoes this.
    """
    key = _project_of(path)
    patterns = _file_patterns()
    matching = [pattern for pattern in _excluded_patterns() if excluded(key, "", [pattern])]
    if matching:
        _report(as_json, "exclude", key, False, f"{key} is already excluded (by {', '.join(matching)}): nothing changed.")
        return
    _save([*patterns, glob.escape(key)])
    _report(as_json, "exclude", key, True,
            f"Excluded {key}: its sessions are no longer captured and are shown no memory.\n"
            f"Memory already stored for it stays; `claude-mem forget --project {key}` deletes it.")


@projects.command("include")
@click.argument("path", default=".", required=False)
@json_option("Print what was done as JSON.")
def include(path: str, as_json: bool) -> None:
    """Capture the project at PATH (default: the current directory) again: its entry in
    `excluded_projects` (settings.json) is removed.

    A broader pattern that also matches other projects (`~/work/*`), or one set in
    CLAUDE_MEM_EXCLUDED_PROJECTS, is left as it is: the command names it (change it with
    `claude-mem settings set excluded_projects …`).
    """
    key = _project_of(path)
    patterns = _file_patterns()
    kept = [pattern for pattern in patterns if os.path.expanduser(pattern) not in (key, glob.escape(key))]
    if len(kept) != len(patterns):
        _save(kept)
    removed = [pattern for pattern in patterns if pattern not in kept]
    still = [pattern for pattern in _excluded_patterns() if excluded(key, "", [pattern])]
    if still:
        text = (f"{key} is still excluded by {', '.join(still)}, which may cover other projects too: change it with "
                f"`claude-mem settings set excluded_projects …`" + (f" (removed {', '.join(removed)})." if removed else "."))
    elif removed:
        text = f"Included {key} again (removed {', '.join(removed)}): its next sessions are captured."
    else:
        text = f"{key} was not excluded: nothing changed."
    _report(as_json, "include", key, bool(removed), text)
