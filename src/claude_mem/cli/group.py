"""The `claude-mem` click group and the one place where domain errors become CLI errors."""

import sqlite3

import click

from claude_mem import __version__, paths, settings
from claude_mem.cli.doctor import doctor
from claude_mem.cli.repair import repair
from claude_mem.settings import SettingsError

# Commands that must stay fast or that check for a stale worker themselves.
NO_STALE_CHECK = ("hook", "statusline", "mcp", "doctor", "repair")


class CLIGroup(click.Group):
    """Translates domain errors into one clear line and exit code 1, once, at the edge."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except SettingsError as exc:
            raise click.ClickException(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            raise click.ClickException(f"database error: {exc}") from exc
        except OSError as exc:  # e.g. a data dir that is a file, or not writable
            where = f": {exc.filename}" if exc.filename else ""
            raise click.ClickException(f"{exc.strerror or exc}{where}") from exc


@click.group(cls=CLIGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="claude-mem")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Persistent memory for Claude Code.

    Hooks capture what happens in your Claude Code sessions, a background worker compresses it
    into short observations, and every new session starts with an index of what was learned.

    Data lives in ~/.claude-mem-py (set CLAUDE_MEM_DATA_DIR to move it).
    """
    paths.private_files()
    if ctx.invoked_subcommand not in NO_STALE_CHECK:
        stop_stale_worker()


def stop_stale_worker() -> None:
    """A worker whose plugin was uninstalled keeps running until someone notices: the next command
    does (one read of worker.json when all is well), and says so on stderr."""
    from claude_mem.runtime import stale

    stopped = stale.stop_if_stale(settings.data_dir())
    if stopped:
        click.echo(f"claude-mem: {stopped}", err=True)



cli.add_command(doctor)
cli.add_command(repair)
