"""`claude-mem import jsonl FILE`: read back a `claude-mem export` (added to the `import` group in
cli/importing.py)."""

import os

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from claude_mem import settings
from claude_mem.cli.output import console, echo_problems
from claude_mem.recall.export_format import FormatError
from claude_mem.recall.importing import ImportReport, import_jsonl
from claude_mem.store import db


@click.command("jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, readable=True, path_type=str))
@click.option("--dry-run", is_flag=True, help="Read and check everything, say what would be added; write nothing.")
def jsonl(file: str, dry_run: bool) -> None:
    """Import FILE, written by `claude-mem export` (here or on another machine).

    Rows are matched by their global ids: importing a file twice, or a file whose rows are partly
    here already, adds only what is missing. Each session goes in with its rows in one transaction.
    Free text is redacted like everything the hooks capture. A damaged line (cut short, not JSON,
    the wrong shape) is reported with its line number and skipped, and the command then exits
    with code 1; a file of a newer format version is refused whole. The worker indexes the new
    rows for search by meaning on its own.
    """
    errors = Console(stderr=True, highlight=False)
    conn = db.connect(db.db_path(settings.data_dir()))
    try:
        with Progress(TextColumn("importing"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=errors,
                      transient=True, disable=not errors.is_terminal) as bar:
            task = bar.add_task("import", total=os.path.getsize(file))
            report = import_jsonl(conn, file, dry_run=dry_run,
                                  progress=lambda done: bar.update(task, completed=done))
    except FormatError as exc:
        raise click.ClickException(f"{exc}; nothing imported") from exc
    finally:
        conn.close()
    show(report)
    if report.skipped:
        raise SystemExit(1)


def show(report: ImportReport) -> None:
    """The counts as a table on stdout; each problem on stderr (the first few, then how many more)."""
    table = Table(title=f"{'would import (dry run)' if report.dry_run else 'imported'}: {report.path}",
                  title_justify="left")
    for column in ("", "added", "already here"):
        table.add_column(column, justify="right" if column else "left")
    for name in report.added:
        table.add_row(name, str(report.added[name]), str(report.present[name]))
    console().print(table)
    echo_problems(report.problems)
    if report.skipped:
        click.echo(f"{report.skipped} line(s) skipped; everything else was "
                   f"{'checked' if report.dry_run else 'imported'}", err=True)
