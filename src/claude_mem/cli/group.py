"""The `claude-mem` click group and the one place where domain errors become CLI errors.

The group is lazy: a command's module loads only when that command runs (click's LazyGroup
pattern), so `claude-mem search` does not pay for doctor, export, import and the providers. `--help`
lists every command from `LAZY`'s short help without importing any of them; a test holds each to its
command's own docstring.
"""

import importlib
import sys
from typing import NamedTuple

import click
from click.formatting import HelpFormatter

from claude_mem import __version__, paths
from claude_mem.domain import ClaudeMemError

# Commands that must stay fast or that check for a stale worker themselves.
NO_STALE_CHECK = ("hook", "statusline", "mcp", "doctor", "repair")


class Lazy(NamedTuple):
    """Where a command lives (`module:attribute`) and its short help as `--help` lists it."""

    where: str
    short_help: str


LAZY: dict[str, Lazy] = {
    "backup": Lazy("claude_mem.cli.worker:backup_cmd",
                   "Write a snapshot of the database now (into <data dir>/backups, rotated by `backups_keep`)."),
    "context": Lazy("claude_mem.cli.recall:context",
                    "Print exactly the context a Claude Code session starting here would receive."),
    "doctor": Lazy("claude_mem.cli.doctor:doctor",
                   "Check the installation: one line per check, with how to fix what is wrong."),
    "export": Lazy("claude_mem.cli.exporting:export",
                   "Write memory as JSONL: sessions, prompts, observations and summaries, one per line."),
    "failures": Lazy("claude_mem.cli.failures:failures",
                     "Recurring failures per project: how often and when, and the fix that resolved them."),
    "forget": Lazy("claude_mem.cli.recall:forget",
                   "Delete observations by id, a whole session, or a whole project — for good."),
    "hook": Lazy("claude_mem.cli.hook:hook", "Claude Code hooks: read the hook JSON on stdin, capture it, exit 0."),
    "import": Lazy("claude_mem.cli.importing:import_group",
                   "Bring memory in: from Claude Code's transcripts, from the original claude-mem, or from an export"
                   " of claude-mem (jsonl)."),
    "install": Lazy("claude_mem.cli.install:install",
                    "Register claude-mem with Claude Code: its hooks and its MCP server `memory`."),
    "mcp": Lazy("claude_mem.cli.mcp_cmd:mcp",
                "Serve memory search to Claude Code over MCP (stdio) until the client disconnects."),
    "migrate": Lazy("claude_mem.cli.status:migrate", "Create the database, or bring its schema up to date."),
    "projects": Lazy("claude_mem.cli.projects:projects",
                     "The projects memory knows: key (the repository root), name, remote, sessions, observations,"
                     " last activity."),
    "queue": Lazy("claude_mem.cli.queue:queue", "List the events waiting for the observer, and those that failed."),
    "remember": Lazy("claude_mem.cli.recall:remember",
                     "Store a note by hand; it shows in the session-start index and in search like any other."),
    "repair": Lazy("claude_mem.cli.repair:repair",
                   "Fix what `claude-mem doctor` finds, saying each step, then run doctor again."),
    "restore": Lazy("claude_mem.cli.worker:restore_cmd",
                    "Replace the database with snapshot FILE (refused while the worker runs)."),
    "search": Lazy("claude_mem.cli.recall:search", "Search memory by words and by meaning."),
    "settings": Lazy("claude_mem.cli.settings_cmd:settings_group",
                     "Show every setting, its value and where the value comes from."),
    "show": Lazy("claude_mem.cli.recall:show",
                 "Print observations in full: `12` or `#12`; also summaries `S3` and prompts `P7`."),
    "status": Lazy("claude_mem.cli.status:status", "Show where the data lives and what the store holds."),
    "statusline": Lazy("claude_mem.cli.statusline_cmd:statusline",
                       "One short line for Claude Code's status bar: the notes stored for this project, what waits in"
                       " the queue, failures, and the observer."),
    "team": Lazy("claude_mem.cli.team:team",
                 "Team memory: share chosen projects' memory with other machines through a PostgreSQL server."),
    "timeline": Lazy("claude_mem.cli.recall:timeline", "Show what happened around ANCHOR, in time order."),
    "uninstall": Lazy("claude_mem.cli.install:uninstall",
                      "Take claude-mem out of Claude Code's config again, and stop the worker."),
    "viewer": Lazy("claude_mem.cli.viewer:viewer_cmd",
                   "Open the web viewer: a live feed of memory as it is made, search, and the observer's queue."),
    "worker": Lazy("claude_mem.cli.worker:worker", "Run and inspect the background worker."),
}


class DomainError(click.ClickException):
    """A `ClaudeMemError` as click shows it: `Error: <message>`, exit code the error's."""

    def __init__(self, error: ClaudeMemError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance


class CLIGroup(click.Group):
    """Loads a command's module when the command is asked for (`LAZY`), and translates domain errors into
    one clear line (`Error: …`) and their exit code, once, at the edge: every `ClaudeMemError`, a database
    that cannot be read, and an OS error on the data dir."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(LAZY))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY:
            module_name, _, attribute = LAZY[cmd_name].where.partition(":")
            command = getattr(importlib.import_module(module_name), attribute)  # most register themselves
            if cmd_name not in self.commands:
                self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: HelpFormatter) -> None:
        """The command list of `--help`, as click writes it, from `LAZY` for the commands not loaded."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None and loaded.hidden:
                continue
            rows.append((name, (loaded or click.Command(name, help=LAZY[name].short_help)).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ClaudeMemError as exc:
            raise DomainError(exc) from exc
        except Exception as exc:
            # A database error can only come from a store already imported; the store loads with the commands
            # that need it.
            store = sys.modules.get("claude_mem.store")
            if store is not None and isinstance(exc, store.DatabaseError):
                raise click.ClickException(f"database error: {exc}") from exc
            if isinstance(exc, OSError):  # e.g. a data dir that is a file, or not writable
                where = f": {exc.filename}" if exc.filename else ""
                raise click.ClickException(f"{exc.strerror or exc}{where}") from exc
            raise


@click.group(cls=CLIGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="claude-mem")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Persistent memory for Claude Code.

    Hooks capture what happens in your Claude Code sessions, a background worker compresses it
    into short observations, and every new session starts with an index of what was learned.

    Data lives in ~/.claude-mem-py (set CLAUDE_MEM_DATA_DIR to move it).

    One session without memory: start Claude Code with CLAUDE_MEM=off (nothing stored or shown),
    CLAUDE_MEM=read (memory shown, nothing of the session stored) or CLAUDE_MEM=write (stored, no
    memory shown); any other value is taken as off. A whole project: `claude-mem projects exclude`.
    """
    paths.private_files()
    if ctx.invoked_subcommand not in NO_STALE_CHECK:
        stop_stale_worker()


def stop_stale_worker() -> None:
    """A worker whose plugin was uninstalled keeps running until someone notices: the next command
    does (one read of worker.json when all is well), and says so on stderr."""
    from claude_mem import settings
    from claude_mem.runtime import stale

    stopped = stale.stop_if_stale(settings.data_dir())
    if stopped:
        click.echo(f"claude-mem: {stopped}", err=True)
