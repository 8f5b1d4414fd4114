"""`claude-mem viewer`: open the live web viewer the worker serves (starting the worker if needed)."""

from __future__ import annotations

import webbrowser

import click

from claude_mem.cli.group import cli
from claude_mem.runtime import control


@cli.command("viewer")
@click.option("--no-open", is_flag=True, help="Only print the URL; do not open a browser.")
def viewer_cmd(no_open: bool) -> None:
    """Open the web viewer: a live feed of memory as it is made, search, and the observer's queue.

    Starts the worker for this data dir when none runs, prints the viewer's URL
    (http://127.0.0.1:<port>/, reachable from this machine only) and opens it in the default
    browser (the BROWSER environment variable chooses another one).
    """
    try:
        current, started = control.start()
    except OSError as exc:  # the data dir cannot be created or locked
        raise click.ClickException(f"cannot start the worker: {exc}") from exc
    url = f"{current.url}/"
    if started:
        click.echo(f"worker started: pid {current.pid}, data dir {current.data_dir}")
    click.echo(url)
    if not no_open and not webbrowser.open(url):
        click.echo("no browser could be opened here; open the URL above yourself", err=True)
