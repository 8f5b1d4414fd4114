"""`claude-mem team status [--json]`, `team sync`, `team init` and `team add-member`: team memory through
PostgreSQL."""

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
from claude_mem.store import db, team_admin, team_server
from claude_mem.store import team as local
from claude_mem.team import config as team_config
from claude_mem.team import integrity
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
            "last_error_at": saved.get("last_error_at"), "skipped": local.pull_skips(saved), **integrity.report(saved)}


def team_report(directory: str) -> dict[str, Any]:
    """The local record, with the running worker's live view (connected, error) over it."""
    config = team_config.from_settings(settings.load(directory))
    report = local_report(directory, config)
    worker = control.state(directory)
    live = (worker.health or {}).get("team") if worker.running else None
    report["worker"] = {"running": worker.running, "pid": worker.pid}
    if isinstance(live, dict) and live.get("enabled"):
        for key in ("connected", "error", "outbox", "since_sync_seconds", "last_sync_at", "pushed", "pulled",
                    "resent", "refused", "reconciled_at", "reconcile_found", "authorship"):
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
    lines.extend(integrity_lines(report))
    return lines


def integrity_lines(report: dict[str, Any]) -> list[str]:
    """Authorship, the last reconciliation, refused rows: what `team status` says of the server's trust."""
    lines = []
    if report.get("authorship") == "verified":
        lines.append(f"authorship: verified (the server binds each row to its role; this machine writes as role"
                     f" {report.get('server_role')})")
    elif report.get("authorship") == "unverified":
        lines.append("authorship: unverified (one shared role: authors are what each machine claims;"
                     " an admin can run `claude-mem team init`)")
    if report.get("reconciled_at"):
        lines.append(f"last check against the server: {report['reconciled_at']}: {report.get('reconcile_found')};"
                     f" {report.get('resent', 0)} row(s) re-sent in all")
    if report.get("refused"):
        lines.append(f"refused by the server: {report['refused']} row(s) (over {team_server.ROW_LIMIT // 1024} KiB,"
                     " or not this role's to write); they stay in the outbox, see the worker log")
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

    With one shared role, authors are what each machine claims; an admin who runs `team init` and
    gives each member a role with `team add-member` makes the server bind every row to its writer.
    """


@team.command("status")
@json_option()
def status(as_json: bool) -> None:
    """Whether team memory is on and connected, what waits to be pushed (the outbox), the last error,
    how many rows were pushed and pulled, whether the server verifies authorship, the last check of
    what the server holds (and rows sent again), and rows the server refused. Never contacts the
    server itself."""
    report = team_report(settings.data_dir())
    if as_json:
        emit_json(report)
        return
    for line in status_lines(report):
        click.echo(line)


@team.command("sync")
def sync() -> None:
    """Exchange with the team server now (push, then pull), with progress; exits 1 with the reason
    when the server cannot be used. It first checks what the server holds against what this machine
    pushed, and sends again what the server lost (a crash, an older backup restored). Safe beside a
    running worker: every step is idempotent."""
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
            totals = replicator.sync_once(advance, reconcile=True)
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
    if totals.resent:
        click.echo(f"reconciliation: the server had lost {totals.resent} row(s) pushed from here; sent again")
    if totals.refused:
        click.echo(f"refused by the server: {totals.refused} row(s); they stay in the outbox (see `team status`)")


def _admin_connection(url: str) -> Any:
    problem = team_config.check_url(url)
    if problem:
        raise click.ClickException(f"ADMIN_URL: {problem}")
    try:
        return team_server.connect(url)
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:
        raise click.ClickException(f"cannot connect to {team_config.server_label(url)}:"
                                   f" {team_config.safe_error(exc, url)}") from None


@team.command("init")
@click.argument("admin_url", metavar="ADMIN_URL")
def init(admin_url: str) -> None:
    """Set a team server up so that every row is bound to the member who wrote it (run once, by an admin).

    ADMIN_URL is postgresql://ADMIN:PASSWORD@HOST:PORT/DATABASE for a role that may create roles
    (CREATEROLE, and CREATE on the database; or a superuser). It creates the claude_mem schema owned by
    that role (or brings an older one up to date), a member group role for this database, and forces
    row-level security: a member writes rows only as its own role and changes or buries (forgets) only
    its own rows, which every machine then deletes; forgetting another member's row removes it from
    that machine only. Authors shown are the names `team add-member` gave, never what a machine claims.
    Safe to run again. Then add each member with `claude-mem team add-member NAME --url ADMIN_URL`.
    """
    conn = _admin_connection(admin_url)
    try:
        done = team_admin.init(conn)
    except Exception as exc:
        raise click.ClickException(f"team init failed: {team_config.safe_error(exc, admin_url)}") from None
    finally:
        conn.close()
    if done["migrated"]:
        click.echo(f"schema claude_mem created/updated: {', '.join(done['migrated'])}")
    click.echo(f"member group role: {done['group']}" + (" (created)" if done["created_group"] else " (exists)"))
    click.echo(f"team server {team_config.server_label(admin_url)} is set up: authorship verified by row-level"
               " security. Add members with: claude-mem team add-member NAME --url ADMIN_URL")


@team.command("add-member")
@click.argument("name")
@click.option("--url", "admin_url", required=True, metavar="ADMIN_URL",
              help="The admin's URL, as given to `team init`.")
@click.option("--role", default=None, help="The PostgreSQL role to create (default: made from NAME).")
def add_member(name: str, admin_url: str, role: str | None) -> None:
    """Create a login role for member NAME on a server set up with `team init`, with a generated password.

    NAME is the author shown on that member's rows. The last line printed is the postgresql:// URL to
    hand to that member (privately: it holds the password), who sets it with `claude-mem settings set
    team_database_url URL`. The password is sent to the server only as a SCRAM verifier.
    """
    if not name.strip():
        raise click.ClickException("NAME is empty: give the member's name as it should show on their rows")
    conn = _admin_connection(admin_url)
    try:
        made = team_admin.add_member(conn, name, role)
    except Exception as exc:
        raise click.ClickException(f"team add-member failed: {team_config.safe_error(exc, admin_url)}") from None
    finally:
        conn.close()
    click.echo(f"role {made['role']} created for {made['name']}; hand this URL to them (it holds the password):")
    click.echo(team_config.member_url(admin_url, made["role"], made["password"]))
