"""`claude-mem status` and `claude-mem migrate`."""

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from claude_mem import settings, store
from claude_mem.capture.diagnostics import capture_report
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json, human_bytes
from claude_mem.cli.plugin_env import environment_report, recorded_line
from claude_mem.cli.worker import describe_report, worker_report
from claude_mem.observer.budget import report_line
from claude_mem.observer.providers.auto import describe
from claude_mem.observer.report import observer_report
from claude_mem.recall import usage
from claude_mem.runtime import origin, switch
from claude_mem.store import db, migrations, stats
from claude_mem.store.failure_schema import m020_failures

# What sessions were shown and used (m018), with the failure notes the hooks added (m020).
USE_SCHEMA = migrations.MIGRATIONS.index(m020_failures) + 1


def selected_observer(worker: dict[str, Any], directory: str) -> dict[str, Any]:
    """The observer as the running worker reports it in `/health`; with no worker, what these settings
    would give (the CLI's own environment may differ from the worker's, so a worker's word wins)."""
    provider = (worker.get("health") or {}).get("provider") if worker.get("running") else None
    if isinstance(provider, dict) and provider.get("name"):
        return {"name": str(provider["name"]), "ok": bool(provider.get("ok")), "source": "worker",
                "reason": f"reported by the running worker (pid {worker.get('pid')})",
                "detail": str(provider.get("reason") or "")}
    return {**describe(settings.load(directory)), "source": "settings"}


def usage_report(directory: str, days: int = usage.IN_USE_DAYS) -> dict[str, Any] | None:
    """Memory in use over the last `days` days (`recall.usage.in_use`), all projects; None before a store
    exists or while it predates m020 (not all of it was recorded yet)."""
    try:
        conn = store.open(directory, readonly=True)
    except store.NoDatabase:
        return None
    try:
        if db.schema_version(conn) < USE_SCHEMA:
            return None
        return usage.in_use(conn, None, days)
    finally:
        conn.close()


def switch_report() -> dict[str, Any]:
    """`CLAUDE_MEM` in this shell (`runtime.switch`): what a session started from it stores and is shown."""
    mode = switch.mode()
    return {"value": switch.raw(), "mode": mode, "captures": switch.captures(mode), "shows": switch.shows(mode),
            "problem": switch.problem()}


def status_report() -> dict[str, Any]:
    """Everything `status` knows: the store, capture problems, the observer, the worker, the plugin's
    environment and refused settings."""
    directory = settings.data_dir()
    worker = worker_report()
    observer = observer_report(directory)
    observer["selected"] = selected_observer(worker, directory)
    if worker.get("running") and (worker.get("health") or {}).get("budget"):  # the budget the worker applies
        observer["budget"] = worker["health"]["budget"]
    return {"store": stats.store_report(directory), "capture": capture_report(directory),
            "privacy": stats.privacy_report(directory), "observer": observer, "worker": worker,
            "environment": environment_report(directory), "worker_stopped": origin.read_stopped(directory),
            "usage": usage_report(directory), "switch": switch_report(), "warnings": settings.problems(directory),
            "auto_memory": auto_memory_status(directory),
            "degraded": degraded_reasons(worker)}


def degraded_reasons(worker: dict[str, Any]) -> list[dict[str, str]]:
    """Why the running worker's /health says `degraded` ([{code, reason}]; none when it is ok or not running)."""
    return list((worker.get("health") or {}).get("degraded") or []) if worker.get("running") else []


def auto_memory_status(directory: str) -> dict[str, Any]:
    """Claude Code's auto memory for the current project (`recall.auto_memory_report.here`), or {error}."""
    from claude_mem.recall import auto_memory_report

    return auto_memory_report.for_data_dir(directory, settings.load(directory))


@cli.command()
@json_option()
def status(as_json: bool) -> None:
    """Show where the data lives and what the store holds.

    Reports the data dir, database size, and counts of sessions, prompts, queued events by
    status, observations and summaries; secrets caught late (rows the worker's second redaction
    pass had to redact after the hooks missed them); the observer (as the running worker reports
    it, else what the settings would give, and its token budget: today's spend against
    observer_daily_tokens and observer_session_tokens, whether one is spent, when it resets) and
    the worker; the worker's environment (the interpreter
    `claude-mem install` recorded, the plugin's venv: while it is built, its step, percent, start
    time and log); memory in use over the last 7 days (sessions given memory, observations shown,
    how many of them the session then used — fetched, found by a search it ran, or cited — and the
    tokens injected; `--json`: the `usage` object, with per-day, per-project and per-session figures
    and the most and least used memories); every refused setting; and Claude Code's own auto memory for the current project
    (on or off, its directory, files indexed, tokens each memory injects at session start). Never
    creates anything.
    """
    report = status_report()
    if as_json:
        emit_json(report)
        return
    store = report["store"]
    out = console()
    out.print(f"[bold]claude-mem[/bold] data dir: {store['data_dir']}")
    if not store["database_exists"]:
        out.print("database: not created yet (the first hook or `claude-mem migrate` creates it)")
    else:
        out.print(
            f"database: {store['database']} ({human_bytes(store['database_bytes'])}, "
            f"schema v{store['schema_version']})"
        )
    for reason in report["degraded"]:
        out.print(f"degraded: {reason.get('reason')}", markup=False, style="red")
    counts = store["counts"]
    table = Table(show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("sessions", str(counts["sessions"]))
    table.add_row("prompts", str(counts["prompts"]))
    for state, count in counts["events"].items():
        table.add_row(f"events {state}", str(count))
    table.add_row("observations", str(counts["observations"]))
    table.add_row("summaries", str(counts["summaries"]))
    out.print(table)
    _print_usage(out, report["usage"])
    _print_switch(out, report["switch"])
    _print_caught_late(out, report["privacy"])
    for warning in report["warnings"]:
        out.print(f"warning: {warning}", markup=False, style="yellow")
    capture = report["capture"]
    for condition in capture.get("conditions", []):
        out.print(f"capture: {condition['reason']}" + (f" (since {condition['since']})" if condition["since"] else ""),
                  markup=False, style="red")
    if capture["spooled"] or capture["quarantined"]:
        parts = [f"{capture['spooled']} event(s) spooled (the worker ingests them)"] if capture["spooled"] else []
        parts += [f"{capture['quarantined']} bad input(s) quarantined"] if capture["quarantined"] else []
        out.print(f"capture: {', '.join(parts)}; see {capture['hooks_log']}", markup=False)
    observer = report["observer"]
    selected = observer["selected"]
    if selected["source"] == "worker":
        out.print(f"observer: {selected['name']} ({selected['reason']})", markup=False)
    else:
        out.print(f"observer: no worker running; with these settings the observer would be {selected['name']}"
                  f" ({selected['reason']})", markup=False)
    if not selected["ok"]:
        out.print(f"  {selected['name']} cannot work: {selected['detail']}", markup=False, style="red")
    spend = observer.get("budget")
    if spend:
        out.print(f"  {report_line(spend)}", markup=False, style=None if spend["state"] == "ok" else "yellow")
    if observer["next_retry_at"]:
        out.print(f"  next retry at {observer['next_retry_at']}")
    for failure in observer["recent_failures"]:
        out.print(f"  failed #{failure['id']} {failure['kind']} after {failure['attempts']} attempt(s): "
                  f"{str(failure['last_error'] or '')[:160]}  "
                  + ("(transient: the worker retries it)" if failure.get("comes_back")
                     else f"(`claude-mem queue retry {failure['id']}`)"))
    for line in describe_report(report["worker"], shown_warnings=report["warnings"]):
        out.print(line, markup=False)
    plugin_env = report["environment"]
    if plugin_env["recorded"]:
        out.print(f"worker environment: {recorded_line(plugin_env)}", markup=False,
                  style="yellow" if plugin_env["recorded_problem"] else None)
    if plugin_env["shown"]:
        out.print(f"plugin environment: {plugin_env['line']}", markup=False,
                  style="red" if plugin_env["state"] == "failed" else None)
    stopped = report["worker_stopped"]
    if stopped and not report["worker"].get("running"):
        out.print(f"the worker stopped itself at {stopped.get('at')}: {stopped.get('why')}", markup=False)
    _print_auto_memory(out, report["auto_memory"])


def _print_auto_memory(out: Console, found: dict[str, Any]) -> None:
    from claude_mem.recall.auto_memory_report import summary_line

    if found.get("error"):
        out.print(f"Claude Code auto memory: not known ({found['error']})", markup=False, style="yellow")
        return
    out.print(summary_line(found), markup=False)
    for problem in found["problems"][:5]:
        out.print(f"  {problem}", markup=False, style="yellow")


def _print_switch(out: Console, state: dict[str, Any]) -> None:
    if state["mode"] == switch.ON:
        return
    what = {switch.OFF: "stores nothing and is shown nothing", switch.READ: "is shown memory but stores nothing",
            switch.WRITE: "is stored but shown no memory"}[state["mode"]]
    out.print(f"{switch.VARIABLE}={state['value']!r} in this shell: a Claude Code session started from it {what}",
              markup=False, style="yellow")
    if state["problem"]:
        out.print(f"  {state['problem']}", markup=False, style="yellow")


def _print_usage(out: Console, use: dict[str, Any] | None) -> None:
    if not use or not use["sessions"]:
        return
    rate = f" ({use['use_rate']:.0%})" if use["use_rate"] is not None else ""
    ways = ", ".join(f"{how} {count}" for how, count in use["by_how"].items() if count)
    out.print(f"memory in use, last {use['days']} days: {use['sessions']} session(s) shown {use['shown']:,}"
              f" observation(s), {use['used_of_shown']:,} of them used{rate}; {use['tokens_injected']:,} tokens"
              f" injected" + (f"; uses: {ways}" if ways else ""), markup=False)
    notes = use.get("failure_notes") or {}
    if notes.get("notes"):
        out.print(f"  failure notes: {notes['notes']} ({notes['beside_failure']} beside a failure, {notes['before_retry']}"
                  f" before a retry); the session then fixed the failure after {notes['resolved_after']}, used the"
                  f" memory they named after {notes['named_used']}", markup=False)


def _print_caught_late(out: Console, privacy: dict[str, Any]) -> None:
    count = privacy["secrets_caught_late"]
    if not count:
        return
    out.print(f"secrets caught late: {count} (row(s) the worker redacted after the hooks missed a secret)",
              markup=False, style="yellow")
    if privacy["latest"]:
        latest = privacy["latest"][0]
        detail = f", {latest['detail']}" if latest["detail"] else ""
        out.print(f"  latest {latest['at']}: {latest['row']} {latest['id']}{detail}", markup=False)


@cli.command()
def migrate() -> None:
    """Create the database, or bring its schema up to date.

    Every command and hook does this on demand; run it by hand after an upgrade or to set up a
    fresh data dir.
    """
    path = db.db_path(settings.data_dir())
    conn = store.open(path=path, migrate=False)
    try:
        applied = migrations.migrate(conn)
        version = db.schema_version(conn)
    finally:
        conn.close()
    if applied:
        click.echo(f"{path}: applied {', '.join(applied)} (schema v{version})")
    else:
        click.echo(f"{path}: up to date (schema v{version})")
