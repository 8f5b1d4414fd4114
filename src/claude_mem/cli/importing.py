"""The `claude-mem import` group: every way of bringing memory in is one subcommand of it.

Each command only parses its options and picks its source (`importers/`); `run_source` runs it with
a progress bar and `show` prints its report, the same way for every source. Errors are the
importers' domain errors, translated once by the `claude-mem` group.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from claude_mem import importers, paths, settings
from claude_mem.cli.checks_claude import _original_settings, original_dir
from claude_mem.cli.group import cli
from claude_mem.cli.options import project_option
from claude_mem.cli.output import console, echo_problems
from claude_mem.domain import RecallError, parse_time
from claude_mem.importers.jsonl import JsonlSource
from claude_mem.importers.original import OriginalSource, parse_maps
from claude_mem.importers.source import ImportReport, Source
from claude_mem.importers.transcripts import TranscriptSource

INTERRUPTED = ("Interrupted: the sessions imported so far are stored whole; run the same command again to import "
               "the rest.")


@cli.group("import")
def import_group() -> None:
    """Bring memory in: from Claude Code's transcripts, from the original claude-mem, or from an
    export of claude-mem (jsonl).

    Every import is safe to repeat (what is stored already is not added again), redacts secrets
    like a capture, reports each line or row it had to skip with its file and line, and exits
    with code 1 when it skipped anything. --dry-run writes nothing and says what would be added.
    """


def run_source(source: Source, dry_run: bool) -> None:
    """Run `source` into the data dir's store with a progress bar on stderr, show its report, and exit
    with code 1 when it left anything out (130 when interrupted)."""
    errors = Console(stderr=True, highlight=False)
    counts: Sequence[ProgressColumn] = (
        (DownloadColumn(), TimeRemainingColumn()) if source.unit == "bytes"
        else (MofNCompleteColumn(), TextColumn(source.unit), TimeElapsedColumn()))
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), *counts, TextColumn("{task.fields[detail]}"),
                      console=errors, transient=True, disable=not errors.is_terminal) as bar:
            task = bar.add_task(f"{'reading' if dry_run else 'importing'} {source.name}", total=source.size(),
                                detail="")

            def progress(done: int, detail: str = "") -> None:
                bar.update(task, completed=done, detail=detail)

            report = importers.run(source, settings.data_dir(), dry_run=dry_run, progress=progress)
    except KeyboardInterrupt:
        click.echo(INTERRUPTED, err=True)
        raise SystemExit(130) from None
    show(report)
    if report.incomplete:
        raise SystemExit(1)


def show(report: ImportReport) -> None:
    """The report: its title, its table and notes on stdout; each problem and what was left out on stderr."""
    out = console()
    out.print(report.title, markup=False, soft_wrap=True)  # paths whole, for copying
    if report.table is not None and report.table.rows:
        table = Table()
        for index, column in enumerate(report.table.columns):
            table.add_column(column, justify="right" if index else "left")
        for row in report.table.rows:
            table.add_row(*(Text(cell) for cell in row))
        out.print(table)
    for note in report.notes:
        out.print(note, markup=False, soft_wrap=True)
    echo_problems(report.problems)
    if report.incomplete:
        click.echo(report.shortfall, err=True)


# -- the sources ----------------------------------------------------------------------------------


@import_group.command("transcripts")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@project_option("Only sessions of this project (its path, a path inside it, or its folder name).")
@click.option("--since", callback=lambda ctx, param, value: _since(value),
              help="Only sessions started since this date (2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w).")
@click.option("--dry-run", is_flag=True, help="Show what would be imported and the observer tokens it would cost; "
              "write nothing.")
def transcripts_cmd(paths: tuple[str, ...], project: str | None, since: str | None, dry_run: bool) -> None:
    """Import past Claude Code sessions from their transcripts.

    Reads the transcript files Claude Code keeps (default: every *.jsonl under
    ~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects; PATHS may be files or directories) and
    queues each session's prompts, tool calls with their results and failures, and turn ends for
    the observer, exactly as the hooks would have captured them: <private> parts, secrets,
    skip_tools, excluded_projects and max_field_chars apply the same way. Sub-agent transcripts
    join their parent session.

    Safe to repeat: what is stored already (captured live by the hooks, or imported before) is not
    added again, and an interrupted import continues where it stopped. Damaged lines and lines of
    unknown type are reported and skipped (exit code 1); everything else is imported.
    """
    config = settings.load(settings.data_dir())
    source = TranscriptSource.find(paths, config, os.environ, since=since, project=project)
    if not paths and source.missing:
        console().print(f"No Claude Code transcripts: {source.missing[0]} does not exist.", markup=False,
                        soft_wrap=True)
        return
    run_source(source, dry_run)


def _since(value: str | None) -> str | None:
    """`--since` in the store's time format; a usage error when it is no date."""
    if not value:
        return None
    try:
        return parse_time(value)
    except RecallError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None


def default_database() -> str:
    """The original's database: in the data dir its own settings.json names, else ~/.claude-mem.

    Not `$CLAUDE_MEM_DATA_DIR`: that variable is ours too (it names OUR data dir), so it never
    says where the original keeps its memory.
    """
    chosen = str(_original_settings().get("CLAUDE_MEM_DATA_DIR") or "") or original_dir()
    return os.path.join(os.path.expanduser(chosen), paths.DB_FILENAME)


def _maps(value: tuple[str, ...]) -> dict[str, str]:
    """`--map NAME=PATH` options; a usage error when one is malformed."""
    try:
        return parse_maps(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--map") from None


@import_group.command("claude-mem")
@click.argument("database", required=False, type=click.Path(dir_okay=False, path_type=str))
@click.option("--map", "maps", multiple=True, metavar="NAME=PATH", callback=lambda ctx, param, value: _maps(value),
              help="File the original's project NAME under the project of folder PATH (repeatable).")
@click.option("--dry-run", is_flag=True, help="Read and check everything, say what would be added per project; "
              "write nothing.")
def claude_mem_cmd(database: str | None, maps: dict[str, str], dry_run: bool) -> None:
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
    with OriginalSource.open(path, maps, settings.data_dir()) as source:
        run_source(source, dry_run)


@import_group.command("jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, readable=True, path_type=str))
@click.option("--dry-run", is_flag=True, help="Read and check everything, say what would be added; write nothing.")
def jsonl_cmd(file: str, dry_run: bool) -> None:
    """Import FILE, written by `claude-mem export` (here or on another machine).

    Rows are matched by their global ids: importing a file twice, or a file whose rows are partly
    here already, adds only what is missing (an observation's content hash is computed again, never
    taken from the file). FILE must be a regular file: a device or FIFO is refused. Each session
    goes in with its rows in one transaction. Free text is redacted like everything the hooks
    capture. A damaged line (cut short, not JSON, the wrong shape) is reported with its line number
    and skipped, and the command then exits with code 1; a file of a newer format version is
    refused whole. The worker indexes the new rows for search by meaning on its own.
    """
    paths.require_regular(file)  # before the store is opened: /dev/zero or a FIFO is refused at once
    run_source(JsonlSource(file), dry_run)
