"""The `claude-mem` click group and the one place where domain errors become CLI errors."""

import sqlite3

import click

from claude_mem import __version__, paths
from claude_mem.settings import SettingsError


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
def cli() -> None:
    """Persistent memory for Claude Code.

    Hooks capture what happens in your Claude Code sessions, a background worker compresses it
    into short observations, and every new session starts with an index of what was learned.

    Data lives in ~/.claude-mem-py (set CLAUDE_MEM_DATA_DIR to move it).
    """
    paths.private_files()

