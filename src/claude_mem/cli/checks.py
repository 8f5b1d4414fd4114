"""`claude-mem doctor`'s checks: what is gathered once, and the checks of Python, the data dir and
the database. Each check returns lines: ok, info, warning or problem (with how to fix it). Nothing
here changes anything, except that a worker whose code was uninstalled is stopped (`runtime.stale`).
"""

from __future__ import annotations

import os
import platform
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from claude_mem import paths, settings
from claude_mem.cli.output import human_bytes
from claude_mem.cli.plugin_env import environment_report
from claude_mem.cli.registration import PLUGIN, Registration, read_registration
from claude_mem.domain import iso
from claude_mem.runtime import control, discovery, stale
from claude_mem.store import checkup

OK, INFO, WARNING, PROBLEM = "ok", "info", "warning", "problem"
MIN_PYTHON = (3, 11)
LOW_DISK_BYTES = 200 * 1024 * 1024
CAUGHT_LATE_RECENT_DAYS = 7  # a secret caught late within this is a warning
VENV_DISK_BYTES = 1024 * 1024 * 1024  # the plugin's environment takes about half of it


@dataclass(frozen=True)
class Check:
    """One line of the report: `fix` says how to fix a warning or problem."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


@dataclass
class Context:
    """What several checks need, read once."""

    data_dir: str
    values: dict[str, Any]
    registration: Registration
    worker: control.WorkerState
    database: checkup.DatabaseReport
    environment: dict[str, Any]
    stopped: list[str] = field(default_factory=list)  # stale workers stopped before the checks

    @property
    def nothing_registered(self) -> bool:
        """Claude Code runs none of our hooks and has no plugin of ours, enabled or not (after an uninstall)."""
        found = self.registration
        return not (found.ours_by_plugin or found.ours_by_settings or found.plugin(PLUGIN, enabled=False))

    @property
    def plugin_runs_hooks(self) -> bool:
        """The installed plugin (not a regular install's hooks) is what Claude Code runs."""
        return self.registration.ours_by_plugin


def gather(data_dir: str | None = None) -> Context:
    directory = data_dir or settings.data_dir()
    stopped = stale.stop_if_stale(directory)
    return Context(
        data_dir=directory,
        values=settings.load(directory),
        registration=read_registration(),
        worker=control.state(directory, timeout=1.0),
        database=checkup.inspect_database(paths.db_path(directory)),
        environment=environment_report(directory),
        stopped=[stopped] if stopped else [],
    )


def python_checks(ctx: Context) -> list[Check]:
    running = Check("python", OK, f"Python {platform.python_version()} runs claude-mem ({sys.executable})")
    needed = PROBLEM if ctx.plugin_runs_hooks else INFO
    why = "the plugin's hooks run with it" if ctx.plugin_runs_hooks else "only the plugin's hooks use it"
    fix = f"install Python ≥ {MIN_PYTHON[0]}.{MIN_PYTHON[1]} as `python3` on the PATH Claude Code runs with"
    found = shutil.which("python3")
    if found is None:
        return [running, Check("hook python", needed, f"no python3 on PATH ({why})", fix)]
    try:
        done = subprocess.run([found, "-I", "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                              capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)
        version = done.stdout.strip()
        numbers = tuple(int(part) for part in version.split("."))
    except (OSError, subprocess.SubprocessError, ValueError):
        return [running, Check("hook python", needed, f"{found} does not run ({why})", fix)]
    if numbers < MIN_PYTHON:
        return [running, Check("hook python", needed, f"python3 on PATH is {version} ({found}); {why}, and they "
                               f"need ≥ {MIN_PYTHON[0]}.{MIN_PYTHON[1]}: nothing is captured", fix)]
    return [running, Check("hook python", OK, f"python3 on PATH is {version} ({found}); {why}")]


def data_dir_checks(ctx: Context) -> list[Check]:
    directory = ctx.data_dir
    existing = directory
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    found = [_data_dir_check(directory), *capture_condition_checks(directory)]
    try:
        free = shutil.disk_usage(existing).free
    except OSError as exc:
        return found + [Check("disk space", WARNING, f"cannot tell the free space of {existing}: {exc}")]
    building = ctx.plugin_runs_hooks and ctx.environment["state"] != "ready"
    if free < LOW_DISK_BYTES:
        found.append(Check("disk space", PROBLEM, f"only {human_bytes(free)} free for {directory}",
                           "free some space: the database, its backups and the plugin's environment live there"))
    elif building and free < VENV_DISK_BYTES:
        found.append(Check("disk space", WARNING, f"{human_bytes(free)} free; the plugin's environment needs about "
                           "500 MB", "free some space before its build"))
    else:
        found.append(Check("disk space", OK, f"{human_bytes(free)} free"))
    return found


def capture_condition_checks(directory: str) -> list[Check]:
    """A full disk or a read-only data dir the hooks met (`capture.trouble`): events kept aside, waiting."""
    from claude_mem.capture import trouble

    fixes = {trouble.DISK_FULL: "free some space: the next hook and the worker store the waiting events",
             trouble.READ_ONLY: "make the data dir writable again: the waiting events are then stored"}
    return [Check("capture", PROBLEM, condition["reason"] + (f" (since {condition['since']})" if condition["since"]
                                                              else ""), fixes[condition["state"]])
            for condition in trouble.store_conditions(directory) if condition["state"] in fixes]


def _data_dir_check(directory: str) -> Check:
    if not os.path.exists(directory):
        return Check("data dir", INFO, f"{directory} does not exist yet (the first hook or `claude-mem migrate` "
                     "creates it)")
    if not os.path.isdir(directory):
        return Check("data dir", PROBLEM, f"{directory} is not a folder",
                     "move that file away, or set CLAUDE_MEM_DATA_DIR to another place")
    if not os.access(directory, os.W_OK | os.X_OK):
        return Check("data dir", PROBLEM, f"{directory} is not writable by you: nothing can be captured",
                     f"chmod u+rwx {directory}")
    mode = stat.S_IMODE(os.stat(directory).st_mode)
    if mode & 0o077:
        return Check("data dir", PROBLEM, f"{directory} has permissions {mode:04o}: other users can read your memory",
                     "`claude-mem repair` (chmod 700)")
    return Check("data dir", OK, f"{directory} (private, writable)")


def database_checks(ctx: Context) -> list[Check]:
    report = ctx.database
    if not report.exists:
        return [Check("database", INFO, "not created yet (the first hook or `claude-mem migrate` creates it)")]
    if report.problem:
        return [Check("database", PROBLEM, f"{report.path} is damaged ({report.problem})", _restore_fix(ctx.data_dir))]
    found = []
    where = f"{report.path} ({human_bytes(report.size)}, schema v{report.schema_version})"
    if report.schema_version > report.latest_version:
        found.append(Check("database", PROBLEM, f"{where} was written by a newer claude-mem (this one knows up to "
                           f"v{report.latest_version})", "upgrade claude-mem (and the plugin) to the newest version"))
    elif report.broken_indexes:
        found.append(Check("database", PROBLEM, f"{where}: damaged full-text index(es) {', '.join(report.broken_indexes)}"
                           " (search misses rows; new observations cannot be stored)",
                           "`claude-mem repair` rebuilds them from their tables"))
    else:
        indexes = "full-text indexes ok" if report.indexes_checked else \
            "full-text indexes not checked (too large to copy; `claude-mem repair` checks them)"
        upgrade = "" if report.schema_version == report.latest_version else \
            f"; this version upgrades it to v{report.latest_version} when it opens it (`claude-mem migrate`)"
        found.append(Check("database", OK, f"{where}: quick_check ok, {indexes}{upgrade}"))
    failed = report.queue.get("failed", 0)
    if failed:
        found.append(Check("queue", WARNING, f"{failed} event(s) failed after {ctx.values['max_attempts']} attempts",
                           "`claude-mem queue --status failed` shows why; `claude-mem queue retry --all` retries them"))
    return found + _caught_late_checks(report.caught_late) + [_backups_check(ctx)] + _recovery_checks(ctx.data_dir)


def _caught_late_checks(caught: dict[str, Any]) -> list[Check]:
    """Secrets the worker's second redaction pass caught: the hooks' first pass has a gap — a warning
    while the latest catch is recent, information after."""
    count = caught.get("secrets_caught_late") or 0
    if not count:
        return []
    latest = caught["latest"][0] if caught.get("latest") else {}
    when = str(latest.get("at") or "")
    detail = (f"the worker redacted {count} row(s) holding a secret the hooks missed (latest {when or 'unknown'}:"
              f" {latest.get('row', '?')} {latest.get('id', '?')}); the stored rows are redacted now")
    if when and when >= iso(time.time() - CAUGHT_LATE_RECENT_DAYS * 86400):
        return [Check("redaction", WARNING, detail, "the hooks' first pass has a gap: make sure the plugin runs this"
                      " claude-mem version; if it does, report the kind of value (never the value) that slipped"
                      " through")]
    return [Check("redaction", INFO, detail)]


def newest_good_backup(data_dir: str) -> str | None:
    """The newest snapshot (by its own record, not its name) that passes quick_check, found without writing."""
    from claude_mem.store import backup

    for path in reversed(backup.list_backups(data_dir)):
        if not checkup.inspect_database(path, fts_limit=-1).problem:
            return path
    return None


def _restore_fix(data_dir: str) -> str:
    good = newest_good_backup(data_dir)
    if good:
        return (f"`claude-mem repair` restores {os.path.basename(good)} (it asks first; rows still readable are kept); "
                "the worker does the same when it starts")
    return ("no usable backup: `claude-mem repair` moves it aside and starts an empty database with the capture rows "
            "still readable (it asks first)")


def _backups_check(ctx: Context) -> Check:
    from claude_mem.store import backup

    backups = backup.list_backups(ctx.data_dir)
    hours = ctx.values.get("backup_interval_hours")
    if not backups:
        when = f"the worker makes one every {hours} h" if hours else "automatic snapshots are off"
        return Check("backups", INFO, f"none yet ({when}; `claude-mem backup` makes one now)")
    age = backup.newest_age(ctx.data_dir)
    return Check("backups", OK, f"{len(backups)} snapshot(s) in {paths.backups_dir(ctx.data_dir)}, the newest "
                 + (f"made {_age(age)} ago" if age is not None else "dated in the future (a clock ran ahead)"))


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    return f"{seconds / 3600:.0f} h" if seconds < 48 * 3600 else f"{seconds / 86400:.0f} days"


def _recovery_checks(data_dir: str) -> list[Check]:
    recovery = discovery.read_recovery(data_dir)
    if not recovery:
        return []
    return [Check("last recovery", INFO, f"at {recovery.get('at')}: {recovery.get('problem')}; {recovery.get('note')} "
                  f"(the damaged copy: {recovery.get('corrupt_copy') or 'none'})")]
