"""`claude-mem team status [--json]` and `claude-mem team sync`: team memory through PostgreSQL."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from claude_mem import settings, store
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json
from claude_mem.runtime import control
from claude_mem.store import db
from claude_mem.store import team as local
from claude_mem.team import config as team_config
from claude_mem.team.sync import Replicator, record_failure

OFF = ("team memory is off: set team_database_url and team_projects "
       "(claude-mem settings set team_database_url postgresql://…; see README, Team memory)")


def local_report(directory: str, config: team_config.TeamConfig) -> dict[str, Any]:
    """What this data dir knows without asking the server or the worker."""
    report: dict[str, Any] = {"enabled": config.enabled, "problem": config.problem()}
    if not config.enabled:
        return report
    report.update({"server": team_config.server_label(config.url), "projects": list(config.patterns),
                   "author": config.author, "share_prompts": config.share_prompts})
    try:
        conn = store.open(directory, readonly=True)
    except store.NoDatabase:
        return {**report, "outbox": 0, "pushed": 0, "pulled": 0}
    try:
        if db.schema_version(conn) < 8:
            return {**report, "outbox": 0, "pushed": 0, "pulled": 0}
        saved = local.state(conn)
        outbox = Replicator(config, lambda: conn).outbox(conn)
    finally:
        conn.close()
    return {**report, "device": saved.get("device"), "outbox": outbox, "pushed": int(saved.get("pushed", "0")),
            "pulled": int(saved.get("pulled", "0")), "deleted": int(saved.get("deleted", "0")),
            "last_sync_at": saved.get("last_sync_at"), "error": saved.get("last_error") or None,
            "last_error_at": saved.get("last_error_at"), "skipped": local.pull_skips(saved)}


def team_report(directory: str) -> dict[str, Any]:
    """The local record, with the running worker's live view (connected, error) over it."""
    config = team_config.from_settings(settings.load(directory))
    report = local_report(directory, config)
    worker = control.state(directory)
    live = (worker.health or {}).get("team") if worker.running else None
    report["worker"] = {"running": worker.running, "pid": worker.pid}
    if isinstance(live, dict) and live.get("enabled"):
        for key in ("connected", "error", "outbox", "since_sync_seconds", "last_sync_at", "pushed", "pulled"):
            if key in live:
                report[key] = live[key]
    return report


def status_lines(report: dict[str, Any]) -> list[str]:
    if not report["enabled"]:
        return [OFF]
    lines = [f"team server: {report['server']}  author: {report['author']}"
             + (f"  device: {report['device']}" if report.get("device") else ""),
             f"shared projects: {', '.join(report['projects']) or '(none)'}"
             + ("  (prompts shared too)" if report.get("share_prompts") else "")]
    if report.get("problem"):
        lines.append(f"problem: {report['problem']}")
    worker = report["worker"]
    if not worker["running"]:
        lines.append("worker: not running, so nothing replicates now (claude-mem worker start, or claude-mem team sync)")
    elif report.get("connected"):
        since = report.get("since_sync_seconds")
        lines.append("connected: yes" + (f", last exchange {since:.0f} s ago" if since is not None else ""))
    else:
        lines.append("connected: no" + ("" if report.get("error") else " (not yet)"))
    if report.get("error"):
        lines.append(f"last error: {report['error']}")
    lines.append(f"outbox: {report.get('outbox', 0)} row(s) waiting to be pushed; pushed {report.get('pushed', 0)},"
                 f" pulled {report.get('pulled', 0)} in all; last sync {report.get('last_sync_at') or 'never'}")
    if report.get("skipped"):  # rows pulled that this store could not hold (issue 32)
        lines.append(report["skipped"])
    return lines


class RateColumn(ProgressColumn):
    """Rows a second of a push or pull (a join of a large project takes a while: issue 32)."""

    def render(self, task: Any) -> Text:
        return Text(f"{task.speed:,.0f} rows/s" if task.speed else "")


@cli.group("team")
def team() -> None:
    """Team memory: share chosen projects' memory with other machines through a PostgreSQL server.

    Set `team_database_url` (a secret) and `team_projects` (globs of project paths or repository
    remotes); the worker then pushes this machine's sessions' metadata, observations and summaries
    of those projects, and pulls the others', every `team_sync_seconds`. Nothing else leaves.
    """


@team.command("status")
@json_option()
def status(as_json: bool) -> None:
    """Whether team memory is on and connected, what waits to be pushed (the outbox), the last error,
    and how many rows were pushed and pulled. Never contacts the server itself."""
    report = team_report(settings.data_dir())
    if as_json:
        emit_json(report)
        return
    for line in status_lines(report):
        click.echo(line)


@team.command("sync")
def sync() -> None:
    """Exchange with the team server now (push, then pull), with progress; exits 1 with the reason
    when the server cannot be used. Safe beside a running worker: every step is idempotent."""
    directory = settings.data_dir()
    config = team_config.from_settings(settings.load(directory))
    if not config.enabled:
        raise click.ClickException(OFF)
    problem = config.problem()
    if problem:
        raise click.ClickException(problem)
    replicator = Replicator(config, lambda: store.open(directory))
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console(), transient=True, disable=not sys.stderr.isatty()) as progress:
        tasks: dict[str, Any] = {}

        def advance(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = progress.add_task("pushing" if step == "push" else "pulling", total=total or None)
            progress.update(tasks[step], completed=done, total=total or None)

        try:
            totals = replicator.sync_once(advance)
        except Exception as exc:
            message = replicator.describe(exc)
            record_failure(lambda: store.open(directory), message)
            raise click.ClickException(f"team sync failed: {message}") from None
        finally:
            replicator.close()
    if totals.migrated:
        click.echo(f"team server schema created/updated: {', '.join(totals.migrated)}")
    click.echo(f"team sync: pushed {totals.pushed}, pulled {totals.pulled}, deleted {totals.deleted}"
               f" (forgotten here and buried on the server: {totals.buried}); server {team_config.server_label(config.url)}")
