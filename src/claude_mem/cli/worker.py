"""`claude-mem worker start|stop|restart|status`, `claude-mem backup`, `claude-mem restore FILE`."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import click

from claude_mem import settings
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option
from claude_mem.cli.output import console, emit_json, human_bytes
from claude_mem.runtime import control, discovery
from claude_mem.store import backup


def worker_report() -> dict[str, Any]:
    """The "worker" section of `claude-mem status`."""
    return control.state(timeout=1.0).as_dict()


def describe_report(report: dict[str, Any], shown_warnings: Collection[str] = ()) -> list[str]:
    """Human lines that say what runs and where, from `WorkerState.as_dict()`; the worker's settings
    warnings in `shown_warnings` (already printed by the caller) are not repeated."""
    lines = []
    if report["running"]:
        health = report.get("health") or {}
        provider = health.get("provider") or {}
        queue = health.get("queue") or {}
        lines.append(f"worker: running, pid {report['pid']}, {report['url']} (version {health.get('version')})")
        lines.append(f"  data dir: {health.get('data_dir')}")
        info = report.get("info") or {}
        if info.get("python"):
            lines.append(f"  runs with {info['python']}, for {info.get('started_for') or 'nothing registered'} "
                         "(it stops itself once that is uninstalled)")
        lines.append(f"  up for {format_uptime(float(health.get('uptime') or 0))}, status {health.get('status')}")
        ok = "ok" if provider.get("ok") else f"not ok: {provider.get('reason')}"
        lines.append(f"  observer: {provider.get('name')} ({ok})")
        if queue:
            lines.append("  queue: " + ", ".join(f"{count} {name}" for name, count in queue.items()))
        for name, problem in (health.get("problems") or {}).items():
            lines.append(f"  problem in {name}: {problem}")
        for note in (health.get("store") or {}).get("notes") or []:
            lines.append(f"  store repaired: {note}")
        vectors = health.get("vectors")
        if vectors:
            lines.append(vector_line(vectors))
        indexing = health.get("keyword_index") or {}
        if indexing.get("waiting"):  # rows stored before the context field, not yet in the keyword index
            lines.append(f"  keyword index: {indexing['waiting']:,} older rows to index with their neighbours' text")
        if indexing.get("error"):
            lines.append(f"  keyword index: {indexing['error']}")
        for warning in health.get("warnings") or []:
            if warning not in shown_warnings:
                lines.append(f"  settings warning: {warning}")
    else:
        reason = report["reason"]
        lines.append("worker: not running" + (f" ({reason})" if reason and reason != "not running" else ""))
        lines.append(f"  data dir: {report['data_dir']}")
    recovery = report.get("recovery")
    if recovery:
        lines.append(f"  DATABASE RECOVERED at {recovery.get('at')}: {recovery.get('problem')}")
        lines.append(f"    corrupt copy kept at {recovery.get('corrupt_copy')}; {recovery.get('note')}")
    return lines


def format_uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


@cli.group()
def worker() -> None:
    """Run and inspect the background worker.

    The worker is one process per data dir, listening on 127.0.0.1 only. It turns captured events
    into observations, snapshots the database and serves the HTTP API. Hooks start it on their own
    (setting `autostart`); these commands are for doing it by hand.
    """


@worker.command("start")
def worker_start() -> None:
    """Start the worker in the background (nothing happens when one already runs)."""
    current, started = control.start()
    verb = "started" if started else "already running"
    click.echo(f"worker {verb}: pid {current.pid}, {current.url}, data dir {current.data_dir}")


@worker.command("stop")
def worker_stop() -> None:
    """Stop the worker: it finishes or releases its work, stops its child processes and exits."""
    pid = control.stop()
    click.echo(f"worker stopped (pid {pid})" if pid else "worker was not running")


@worker.command("restart")
def worker_restart() -> None:
    """Stop the worker if it runs, then start a fresh one (e.g. after an upgrade)."""
    current, _ = control.restart()
    click.echo(f"worker restarted: pid {current.pid}, {current.url}, data dir {current.data_dir}")


@worker.command("status")
@json_option()
def worker_status(as_json: bool) -> None:
    """Tell whether a worker runs for this data dir, its pid, URL, version, uptime and health.

    Exit code 0 when it runs and answers, 1 otherwise.
    """
    current = control.state()
    if as_json:
        emit_json(current.as_dict())
    else:
        out = console()
        for line in describe_report(current.as_dict()):
            out.print(line, markup=False)
    raise SystemExit(0 if current.running else 1)


@cli.command("backup")
def backup_cmd() -> None:
    """Write a snapshot of the database now (into <data dir>/backups, rotated by `backups_keep`).

    Safe while the worker and hooks run: the snapshot is taken with SQLite's VACUUM INTO.
    """
    data_dir = settings.data_dir()
    keep = int(settings.load(data_dir)["backups_keep"])
    path = backup.snapshot(data_dir, keep)
    try:
        click.echo(f"{path} ({human_bytes(os.path.getsize(path))})")
    except OSError:  # the worker's own snapshot, a moment later, rotated this one out (keep = 1)
        click.echo(f"{path} (since rotated out by a newer snapshot)")


@cli.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def restore_cmd(file: str) -> None:
    """Replace the database with snapshot FILE (refused while the worker runs).

    The current database is kept beside it as claude-mem.db.before-restore-<time>. Stop the worker
    first with `claude-mem worker stop`.
    """
    data_dir = settings.data_dir()
    fd = discovery.try_lock(data_dir)
    if fd is None:
        raise click.ClickException("the worker is running; stop it first with `claude-mem worker stop`")
    try:
        kept = backup.restore(data_dir, os.path.abspath(file))
    finally:
        os.close(fd)
    click.echo(f"restored {file}" + (f"; the previous database is kept at {kept}" if kept else ""))


def vector_line(vectors: dict[str, Any]) -> str:
    """`vectors: 1,200 of 5,000 embedded (model), 104/s, about 37 s left; index: graph of 1,200`."""
    if not vectors.get("available"):
        return f"  vectors: off, keyword search only ({vectors.get('reason')})"
    line = f"  vectors: {vectors.get('embedded', 0):,} of {vectors.get('total', 0):,} embedded ({vectors.get('model')})"
    if vectors.get("queued"):
        line += f", {vectors['rate']}/s" if vectors.get("rate") else ", waiting to start"
        eta = vectors.get("eta_s")
        line += f", about {eta} s left" if isinstance(eta, int) and eta < 90 else (
            f", about {round(eta / 60)} min left" if isinstance(eta, int) else "")
    index = vectors.get("index") or {}
    if index.get("kind") in ("graph", "exact"):
        line += f"; index: {'HNSW graph' if index['kind'] == 'graph' else 'exact'} of {index.get('size', 0):,}"
        line += " (building the graph)" if index.get("building") else ""
    return line
