"""`claude-mem export`: memory as versioned JSONL (docs/export-format.md), to stdout or a file; the
format's writer sits beside its reader in `importers/jsonl.py`."""

import sys

import click

from claude_mem import settings, store
from claude_mem.cli.group import cli
from claude_mem.cli.options import project_option
from claude_mem.domain import parse_time
from claude_mem.importers.jsonl import export_lines, write_atomically
from claude_mem.recall.common import resolve_project


@cli.command("export")
@project_option()
@click.option("--since", help="Only rows stored at or after: 2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w "
                              "(with the sessions they belong to).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=str),
              help="Write to this file (whole or not at all) instead of stdout.")
def export(project: str | None, since: str | None, output: str | None) -> None:
    """Write memory as JSONL: sessions, prompts, observations and summaries, one per line.

    The format is versioned and documented (docs/export-format.md); `claude-mem import jsonl`
    reads it back, here or on another machine. Rows carry global ids, so re-importing adds
    nothing twice. Exporting the same memory twice gives identical files. Forgotten rows are gone
    and are not exported; the event queue, embeddings and settings are not part of it.
    """
    since_stamp = parse_time(since) if since else None
    with store.open(settings.data_dir()) as db:
        lines = export_lines(db, resolve_project(db, project), since_stamp)
        if output:
            count = write_atomically(output, lines)
            click.echo(f"exported {count - 1} records to {output}", err=True)
        else:
            out = sys.stdout.buffer  # UTF-8 whatever the locale says
            for line in lines:
                out.write(line.encode("utf-8") + b"\n")
            out.flush()
