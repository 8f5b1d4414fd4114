"""The `claude-mem` click group and the one place where domain errors become CLI errors."""

import click

from claude_mem import __version__, paths, settings
from claude_mem.cli.doctor import doctor
from claude_mem.cli.repair import repair
from claude_mem.domain import ClaudeMemError
from claude_mem.store import DatabaseError

# Commands that must stay fast or that check for a stale worker themselves.
NO_STALE_CHECK = ("hook", "statusline", "mcp", "doctor", "repair")


class DomainError(click.ClickException):
    """A `ClaudeMemError` as click shows it: `Error: <message>`, exit code the error's."""

    def __init__(self, error: ClaudeMemError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance


class CLIGroup(click.Group):
    """Translates domain errors into one clear line (`Error: …`) and their exit code, once, at the edge:
    every `ClaudeMemError`, a database that cannot be read, and an OS error on the data dir."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ClaudeMemError as exc:
            raise DomainError(exc) from exc
        except DatabaseError as exc:
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
