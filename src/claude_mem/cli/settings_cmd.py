"""`claude-mem settings`: show and change settings (secrets always masked)."""

import click
from rich.table import Table

from claude_mem import settings
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json


def _text(value: object) -> str:
    """A setting's value as a user types it: lists comma-separated, unset as empty."""
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return "" if value is None else str(value)


@cli.group(name="settings", invoke_without_command=True)
@json_option()
@click.pass_context
def settings_group(ctx: click.Context, as_json: bool) -> None:
    """Show every setting, its value and where the value comes from.

    Values come from CLAUDE_MEM_<KEY> environment variables, then <data dir>/settings.json, then
    the defaults. Secrets (keys ending in _api_key or _token) are always shown masked. A value that
    is refused (wrong type, out of range, unknown provider) is listed as a warning on stderr with
    the value used in its place.
    """
    if ctx.invoked_subcommand is not None:
        return
    values = settings.masked(settings.load())
    for problem in settings.problems():
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        emit_json(values)
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("key", "value", "source", "meaning"):
        table.add_column(column)
    for key, (_, meaning) in settings.SPEC.items():
        value = values[key]
        table.add_row(key, _text(value), settings.source_of(key), meaning)
    console().print(table)


def _set_epilog() -> str:
    """The keys with a fixed list of values, written from the settings spec (the provider names from
    domain.PROVIDERS), so `--help` cannot drift from what `set` accepts."""
    lines = ["\b", "Keys with a fixed list of values (case-insensitive):"]
    for key, spec in settings.SETTINGS.items():
        if spec.kind == "choice":
            lines.append(f"  {key}: {', '.join(spec.choices)}")
    return "\n".join(lines)


@settings_group.command(name="set", epilog=_set_epilog())
@click.argument("key")
@click.argument("value")
def settings_set(key: str, value: str) -> None:
    """Write KEY=VALUE into settings.json (lists: comma-separated or a JSON list).

    The value is checked first (type, range, choices); a refused one is an error and nothing is written.
    """
    stored = settings.update_file({key: value})[key]
    shown = _text(settings.display(key, stored))
    click.echo(f"{key} = {shown}  ({settings.settings_path()})")
    env_name = settings.ENV_PREFIX + key.upper()
    if settings.source_of(key) == "env":
        click.echo(f"note: {env_name} is set in the environment and overrides the file", err=True)
