"""`claude-mem install` and `claude-mem uninstall`: claude-mem in Claude Code's own config, for a regular
(pipx, uv tool, pip) install. The file logic is `runtime.claude_config` and `runtime.config_files`."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

import click
from rich.text import Text

from claude_mem import settings
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json, human_bytes
from claude_mem.cli.plugin_env import leftovers_line
from claude_mem.runtime import claude_config, config_files, control, environment, interpreter, purge
from claude_mem.runtime.claude_config import SCOPES, ConfigError, Install
from claude_mem.runtime.config_files import CREATED, REMOVED, RESTORED, UNCHANGED, UPDATED, Outcome

SCOPE_HELP = ("user: every project (~/.claude/settings.json and ~/.claude.json, under $CLAUDE_CONFIG_DIR when set); "
              "project: this folder, shared through git (.claude/settings.json and .mcp.json); "
              "local: this folder, for you alone (.claude/settings.local.json and ~/.claude.json).")
TOOLS = ("search", "timeline", "get_observations")
EXTRA_EFFECT = {"search": "search is by keywords only, not by meaning", "team": "team memory cannot be used"}
STYLES = {CREATED: "green", UPDATED: "green", RESTORED: "green", REMOVED: "yellow", UNCHANGED: "dim"}


def this_install() -> Install:
    """Hooks and server for the interpreter running this command, which has claude_mem installed."""
    return Install(sys.executable, environment.PACKAGE_PARENT)


def say(text: str, style: str = "") -> None:
    """One line for people, never wrapped (paths stay whole)."""
    console().print(Text(text, style=style), soft_wrap=True)


def _describe(change: config_files.Change, adding: bool) -> str:
    if not change.what:
        return "nothing of claude-mem's" if not adding else "already in place"
    if change.target.part == "hooks":
        return ("hooks " if adding else "hooks removed: ") + ", ".join(change.what)
    names = ", ".join(change.what)
    return f"MCP server {names} in {change.target.where}" if adding else f"MCP server {names} removed"


def _print_files(outcome: Outcome, adding: bool, headline: str) -> None:
    """The headline (or, when nothing changed, why not) and a line per file."""
    say(headline if outcome.changed else (
        f"claude-mem is already installed in Claude Code ({outcome.scope} scope); nothing changed." if adding
        else f"claude-mem is not installed in Claude Code's {outcome.scope} scope; nothing to remove."))
    if not (adding or outcome.changed):
        return
    width = max(len(change.action) for change in outcome.changes)
    for change in outcome.changes:
        line = Text("  ")
        line.append(change.action.ljust(width), style=STYLES.get(change.action, ""))
        line.append(f"  {change.target.path}: {_describe(change, adding)}")
        if change.action == RESTORED:
            line.append(" (byte for byte as before install)")
        saved = outcome.backups.get(change.target.path)
        if saved:
            line.append(f"; backup {saved}", style="dim")
        console().print(line, soft_wrap=True)


def _diffs(outcome: Outcome) -> None:
    for change in outcome.changed:
        click.echo(change.diff(), nl=False)
    click.echo(f"(dry run: {len(outcome.changed)} file(s) would change; nothing was written)", err=True)


def _warnings(scope: str, install: Install) -> list[str]:
    """What stands in the way of the installed hooks, read from the user's settings (best effort)."""
    found = []
    try:
        path = os.path.join(claude_config.config_dir(os.environ), "settings.json")
        _, raw = config_files.read(path)
        user = config_files.parse(raw, path) if raw is not None else {}
    except ConfigError:
        user = {}
    if claude_config.plugin_enabled(user):
        found.append(f"the {claude_config.PLUGIN_NAME} plugin is enabled too, so every event would be captured twice; "
                     f"keep one (`claude plugin disable {claude_config.PLUGIN_NAME}@…` or `claude-mem uninstall`)")
    if user.get("disableAllHooks") is True:
        found.append("`disableAllHooks` is true in your user settings: Claude Code runs no hooks, claude-mem's included")
    if scope == "project":
        found.append(f"these files name this machine's interpreter ({install.python}); whoever shares them needs "
                     "claude-mem installed at the same path (use --scope local to keep it to yourself). Claude Code "
                     "asks once before it starts a server from .mcp.json")
    return found


@cli.command()
@click.option("--scope", type=click.Choice(SCOPES), default="user", show_default=True, help=SCOPE_HELP)
@click.option("--dry-run", is_flag=True, help="Print what would change, as a diff, and write nothing.")
@json_option("Print what changed as JSON (with --dry-run: the diffs too).")
def install(scope: str, dry_run: bool, as_json: bool) -> None:
    """Register claude-mem with Claude Code: its hooks and its MCP server `memory`.

    For a regular install (pipx, uv tool, pip); the plugin needs none of this. Adds a hook group of
    its own for SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop and SessionEnd
    to the scope's settings file (other hooks, for the same events too, stay as they are) and the MCP
    server `memory`, which Claude Code shows as mcp__memory__search, mcp__memory__timeline and
    mcp__memory__get_observations. The hooks run this interpreter with `-I -S`, as fast as the
    plugin's.

    It also checks that this interpreter imports every dependency (those of the search and team
    extras too) and records it in <data dir>/install/environment.json: the worker runs with it, the
    plugin's included, so no separate environment is built.

    Safe to run again: nothing changes when all is in place, and an older entry of claude-mem's
    (another interpreter, after a reinstall) is replaced. Every file is backed up into
    <data dir>/install/backups before it changes; a file that is not JSON or cannot be written is
    refused and nothing is written anywhere. `claude-mem uninstall` takes it all out again.
    """
    setup = this_install()
    changes = config_files.plan_install(scope, os.getcwd(), os.environ, setup)
    outcome = Outcome(scope, changes, dry_run=dry_run)
    if dry_run:
        for change in outcome.changed:
            config_files.check_writable(change)
    recorded = None
    if not dry_run:
        outcome.backups = config_files.apply(changes, settings.data_dir())
        recorded = interpreter.record(settings.data_dir(), setup.python, setup.package_parent,
                                      interpreter.check(interpreter.requirements(environment.CHECKOUT)))
    warnings = _warnings(scope, setup)
    if as_json:
        emit_json(_report(outcome, warnings, environment=recorded))
        return
    if dry_run:
        _diffs(outcome)
        return
    _print_files(outcome, True, f"Installed claude-mem into Claude Code ({scope} scope):")
    if outcome.changed:
        prefix = f"mcp__{setup.server}__"
        say("New Claude Code sessions are captured and start with their project's memory; Claude sees the tools as "
            f"{', '.join(prefix + tool for tool in TOOLS)}. `claude-mem uninstall` takes it out.")
    if recorded is not None:
        _say_environment(recorded)
    for warning in warnings:
        say(f"warning: {warning}", "yellow")


def _say_environment(recorded: dict[str, Any]) -> None:
    """Which interpreter the worker will run with, and what it lacks."""
    missing: dict[str, list[str]] = recorded["missing"]
    if interpreter.REQUIRED in missing:
        say(f"warning: the worker cannot run with {recorded['python']}: it lacks "
            f"{', '.join(missing[interpreter.REQUIRED])}; the first session builds {environment.venv_dir(settings.data_dir())}"
            f" instead (several hundred MB). `pip install claude-mem-py` here, then `claude-mem install` again, avoids it",
            "yellow")
        return
    say(f"The worker runs with {recorded['python']} (checked: every dependency imports"
        f"{', except ' + '; '.join(', '.join(names) for names in missing.values()) if missing else ''}); no separate "
        "environment is built.")
    for extra, names in missing.items():
        say(f"note: without the [{extra}] extra ({', '.join(names)}) {EXTRA_EFFECT.get(extra, 'it is off')}; "
            f"`pip install 'claude-mem-py[{extra}]'` adds it", "yellow")


def _report(outcome: Outcome, warnings: list[str], **extra: Any) -> dict[str, Any]:
    report = {**outcome.as_dict(), "warnings": warnings, **extra}
    if outcome.dry_run:
        diffs = {change.target.path: change.diff() for change in outcome.changed}
        for entry in report["files"]:
            entry["diff"] = diffs.get(entry["path"], "")
    return report


def _confirm_purge(data_dir: str, yes: bool) -> bool:
    """Check (and, without --yes, ask) before anything happens; False when there is nothing to purge."""
    if not os.path.lexists(data_dir):
        return False
    problem = purge.refusal(data_dir, os.environ)
    if problem:
        raise click.ClickException(f"--purge refused: {problem}; nothing was changed")
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException(f"--purge deletes {data_dir} for good and asks first, but there is no terminal "
                                       "to ask in; run it in a terminal, or add --yes; nothing was changed")
        click.confirm(f"Delete {data_dir} ({human_bytes(purge.size_of(data_dir))}): every memory, backup and log, "
                      "and the plugin's venv, for good?", abort=True, err=True)
    return True


@cli.command()
@click.option("--scope", type=click.Choice(SCOPES), default="user", show_default=True, help=SCOPE_HELP)
@click.option("--purge", "purge_data", is_flag=True,
              help="Also delete the data dir for good: the memory database, backups, logs and the plugin's venv.")
@click.option("--yes", is_flag=True, help="Do not ask before --purge deletes (needed without a terminal).")
@json_option("Print what was removed as JSON.")
def uninstall(scope: str, purge_data: bool, yes: bool, as_json: bool) -> None:
    """Take claude-mem out of Claude Code's config again, and stop the worker.

    Removes exactly what `claude-mem install --scope SCOPE` added — hooks and servers that run
    claude-mem, never another's — and nothing else. A file nobody edited since install is put back
    byte for byte (a file install created is deleted, with the folders it created); in a file edited
    since, the edits stay. Every changed file is backed up first. The recorded interpreter is
    forgotten, and what stays on disk (the data dir: your memory, the plugin's environment) is
    listed with its size and how to remove it. With --purge the data dir goes too, after a
    confirmation (or --yes); a folder that does not look like claude-mem's data dir is refused.
    """
    data_dir = settings.data_dir()
    changes = config_files.plan_uninstall(scope, os.getcwd(), os.environ, data_dir)
    purging = _confirm_purge(data_dir, yes) if purge_data else False
    outcome = Outcome(scope, changes)
    outcome.backups = config_files.apply(changes, data_dir)
    stopped = control.stop(data_dir) if os.path.isdir(data_dir) else None
    forgot = interpreter.forget(data_dir)
    size = purge.size_of(data_dir) if purging else 0
    if purging:
        shutil.rmtree(data_dir)
    kept = purge.leftovers(data_dir)
    if as_json:
        emit_json(_report(outcome, [], worker_stopped=stopped, purged=data_dir if purging else None, purged_bytes=size,
                          environment_forgotten=forgot, kept=kept, remove=purge.removal_hint(kept) if kept["exists"] else ""))
        return
    _print_files(outcome, False, f"Removed claude-mem from Claude Code ({scope} scope):")
    say(f"worker stopped (pid {stopped})" if stopped else "worker was not running")
    if purging:
        say(f"deleted {data_dir} ({human_bytes(size)})")
    elif purge_data:
        say(f"nothing to purge: {data_dir} does not exist")
    elif kept["exists"]:
        say(f"kept on disk: {leftovers_line(kept)}")
        say(f"to remove it: {purge.removal_hint(kept)}")
