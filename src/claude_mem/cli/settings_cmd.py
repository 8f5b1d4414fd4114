"""`claude-mem settings`: show and change settings (secrets always masked)."""

import click
from rich.table import Table

from claude_mem import settings
from claude_mem.cli.group import cli
from claude_mem.cli.output import console, emit_json


@cli.group(name="settings", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def settings_group(ctx: click.Context, as_json: bool) -> None:
    """Show every setting, its value and where the value comes from.

    Values come from CLAUDE_MEM_<KEY> environment variables, then <data dir>/settings.json, then
    the defaults. Secrets (keys ending in _api_key or _token) are always shown masked.
    """
    if ctx.invoked_subcommand is not None:
        return
    values = settings.masked(settings.load(strict=True))
    if as_json:
        emit_json(values)
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("key", "value", "source", "meaning"):
        table.add_column(column)
    for key, (_, meaning) in settings.SPEC.items():
        value = values[key]
        shown = ",".join(value) if isinstance(value, list) else ("" if value is None else str(value))
        table.add_row(key, shown, settings.source_of(key), meaning)
    console().print(table)


@settings_group.command(name="set")
@click.argument("key")
@click.argument("value")
def settings_set(key: str, value: str) -> None:
    """Write KEY=VALUE into settings.json (lists: comma-separated or a JSON list)."""
    settings.update_file({key: value})
    shown = settings.MASK if settings.is_secret(key) and value else value
    click.echo(f"{key} = {shown}  ({settings.settings_path()})")
    env_name = settings.ENV_PREFIX + key.upper()
    if settings.source_of(key) == "env":
        click.echo(f"note: {env_name} is set in the environment and overrides the file", err=True)
