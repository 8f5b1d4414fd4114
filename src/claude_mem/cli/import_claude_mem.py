"""`claude-mem import claude-mem [DB] [--map NAME=PATH…] [--dry-run]`: the original (TypeScript)
claude-mem's memory brought over (added to the `import` group in cli/importing.py)."""

from __future__ import annotations

import os
import sqlite3

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from claude_mem import paths, settings
from claude_mem.cli.checks_claude import _original_settings, original_dir
from claude_mem.cli.output import console, echo_problems
from claude_mem.importers import original
from claude_mem.importers.original import Outcome
from claude_mem.store import db, foreign


def default_database() -> str:
    """The original's database: in the data dir its own settings.json names, else ~/.claude-mem.

    Not `$CLAUDE_MEM_DATA_DIR`: that variable is ours too (it names OUR data dir), so it never
    says where the original keeps its memory.
    """
    chosen = str(_original_settings().get("CLAUDE_MEM_DATA_DIR") or "") or original_dir()
    return os.path.join(os.path.expanduser(chosen), paths.DB_FILENAME)


@click.command("claude-mem")
@click.argument("database", required=False, type=click.Path(dir_okay=False, path_type=str))
@click.option("--map", "maps", multiple=True, metavar="NAME=PATH",
              help="File the original's project NAME under the project of folder PATH (repeatable).")
@click.option("--dry-run", is_flag=True, help="Read and check everything, say what would be added per project; "
              "write nothing.")
def claude_mem_cmd(database: str | None, maps: tuple[str, ...], dry_run: bool) -> None:
    """Import the memory of the original (TypeScript) claude-mem.

    Reads DATABASE (default: ~/.claude-mem/claude-mem.db, or the data dir its own settings.json
    names) read-only, also while its worker runs, and brings over its sessions, prompts,
    observations and summaries as they are, with no observer pass. It names projects by folder
    name only: each NAME goes to the project of --map NAME=PATH, else to a project of ours shown
    as NAME, else to a project keyed by NAME itself; the table says which.

    Safe to repeat: rows imported before are recognised and not added again. Each session goes in
    with its rows in one transaction; text is redacted like everything the hooks capture. Rows it
    cannot read are reported and skipped (exit code 1); everything else is imported.
    """
    path = os.path.abspath(os.path.expanduser(database or default_database()))
    try:
        mapping = original.parse_maps(maps)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--map") from None
    ours = db.db_path(settings.data_dir())
    if os.path.exists(path) and os.path.exists(ours) and os.path.samefile(path, ours):
        raise click.ClickException(f"{path} is claude-mem-py's own database (CLAUDE_MEM_DATA_DIR points at it); "
                                   "nothing imported")
    try:
        source, optional = foreign.open_readonly(path)
    except foreign.ForeignError as exc:
        raise click.ClickException(str(exc)) from None
    # A dry run into a data dir that has no database yet must not create one.
    conn = db.connect(":memory:" if dry_run and not os.path.exists(ours) else ours)
    try:
        outcome = _run(source, optional, conn, path, mapping, dry_run)
    except sqlite3.Error as exc:
        raise click.ClickException(f"{path}: {foreign.describe(exc)}; the sessions imported so far are stored whole, "
                                   "run the same command again for the rest") from None
    except KeyboardInterrupt:
        click.echo("Interrupted: the sessions imported so far are stored whole; run the same command again to import "
                   "the rest.", err=True)
        raise SystemExit(130) from None
    finally:
        source.close()
        conn.close()
    show(outcome)
    if outcome.incomplete:
        raise SystemExit(1)


def _run(source: sqlite3.Connection, optional: dict[str, tuple[str, ...]], conn: sqlite3.Connection,
         path: str, mapping: dict[str, str], dry_run: bool) -> Outcome:
    total = sum(foreign.counts(source).values())
    errors = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("rows"),
               TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True, disable=not errors.is_terminal) as bar:
        task = bar.add_task("reading" if dry_run else "importing", total=total)
        return original.run(source, optional, conn, path, mapping, dry_run=dry_run,
                            progress=lambda done: bar.update(task, completed=done))


def show(outcome: Outcome) -> None:
    """Per project: where it went and what was added; then every problem, on stderr."""
    out = console()
    verb = "would import (dry run, nothing written)" if outcome.dry_run else "imported"
    out.print(f"{verb}: {outcome.path}", markup=False, soft_wrap=True)
    table = Table()
    for column in ("project", *original.TABLES, "already here"):
        table.add_column(column, justify="left" if column == "project" else "right")
    for name in sorted(outcome.choices):
        tally = outcome.tally(name)
        table.add_row(name, *(str(tally.added[kind]) for kind in original.TABLES), str(sum(tally.present.values())))
    out.print(table)
    notes = [f"{name} → {choice.key} ({choice.how})" + (f": {choice.note}" if choice.note else "")
             for name, choice in sorted(outcome.choices.items())]
    notes += [f"--map {name}: no project of that name in {outcome.path}" for name in outcome.unused_maps]
    notes += [f"{count} observation(s) of type {kind!r}, which ours does not have, imported as "
              f"{original.FALLBACK_TYPE}" for kind, count in sorted(outcome.retyped.items())]
    for note in notes:
        out.print(note, markup=False, soft_wrap=True)
    echo_problems(outcome.problems)
    if outcome.incomplete:
        click.echo(f"{outcome.skipped} row(s) skipped, {outcome.emptied} field(s) imported empty; everything else "
                   f"was {'checked' if outcome.dry_run else 'imported'}", err=True)
