"""`claude-mem queue` (what the observer has pending, done and failed) and `claude-mem queue retry`."""

from __future__ import annotations

import click
from rich.table import Table

from claude_mem import settings, store
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json
from claude_mem.domain import EVENT_STATUSES, MAX_ID
from claude_mem.store import Store
from claude_mem.store import queue as event_queue

STATUSES = EVENT_STATUSES


def _open() -> Store:
    return store.open(settings.data_dir())


@cli.group(invoke_without_command=True)
@click.option("--status", "status", type=click.Choice([*STATUSES, "open", "all"]), default="open", show_default=True,
              help="Which events to list: one status, 'open' (pending, claimed and failed) or 'all'.")
@click.option("--session", help="Only events of Claude Code sessions whose id starts with this.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True, help="Most events to list.")
@json_option()
@click.pass_context
def queue(ctx: click.Context, status: str, session: str | None, limit: int, as_json: bool) -> None:
    """List the events waiting for the observer, and those that failed.

    Every prompt, tool call and turn end the hooks capture is queued here until the worker's
    observer turns it into observations and a summary. A failed event shows its last error and
    why it failed: `transient` (the worker stopped, the provider timed out or failed, the database
    was locked) comes back by itself, retried by the worker with a growing wait (1 min, then 4, 16
    and 64); `content` (the observer could not answer for these events) stays failed until
    `claude-mem queue retry` puts it back in the queue.
    """
    if ctx.invoked_subcommand is not None:
        return
    wanted = {"open": ("pending", "claimed", "failed"), "all": STATUSES}.get(status, (status,))
    conn = _open()
    try:
        counts = event_queue.queue_counts(conn)
        rows = event_queue.list_events(conn, wanted, limit=limit, session=session)
    finally:
        conn.close()
    if as_json:
        emit_json({"counts": counts, "events": rows})
        return
    out = console()
    out.print("queue: " + ", ".join(f"{count} {name}" for name, count in counts.items()))
    if not rows:
        out.print(f"no {status if status != 'all' else ''} events".replace("  ", " "))
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("id", "session", "kind", "status", "attempts", "created"):
        table.add_column(column, overflow="fold")
    details: list[str] = []
    for row in rows:
        kind = f"{row['kind']} {row['tool']}" if row["tool"] else str(row["kind"])
        table.add_row(str(row["id"]), str(row["session"])[:8], kind, str(row["status"]), str(row["attempts"]),
                      str(row["created_at"] or "")[5:19].replace("T", " "))
        detail = str(row["last_error"] or "")
        if row["status"] == "failed":
            detail = f"[{failure_note(row)}] {detail}"
        if row["status"] == "pending" and row["next_attempt_at"]:
            detail = f"retry after {row['next_attempt_at']}" + (f"; {detail}" if detail else "")
        if detail:
            details.append(f"#{row['id']}: {detail[:300]}")
    out.print(table)
    for line in details:
        out.print(line, markup=False)


def failure_note(row: dict[str, object]) -> str:
    """Why a failed event failed, and whether the worker retries it by itself."""
    revivals = row.get("revivals")
    rounds = revivals if isinstance(revivals, int) else 0
    if row.get("failure_class") == event_queue.TRANSIENT and rounds < event_queue.MAX_REVIVALS:
        return "transient: the worker retries it by itself"
    if row.get("failure_class") == event_queue.TRANSIENT:
        return f"transient, but retried {rounds} times already: stays failed"
    return "content: stays failed until retried"


@queue.command()
@click.argument("ids", nargs=-1, type=click.IntRange(1, MAX_ID))
@click.option("--all", "all_failed", is_flag=True, help="Requeue every failed event.")
def retry(ids: tuple[int, ...], all_failed: bool) -> None:
    """Put failed events back in the queue with fresh attempts.

    Give event ids (from `claude-mem queue --status failed`) or --all. A pending event waiting
    out a backoff becomes due at once. The running worker picks them up within a second.
    """
    if bool(ids) == all_failed:
        raise click.UsageError("give event ids or --all (not both)")
    conn = _open()
    try:
        count = event_queue.retry(conn, None if all_failed else list(ids))
    finally:
        conn.close()
    click.echo(f"requeued {count} event{'s' if count != 1 else ''}")
