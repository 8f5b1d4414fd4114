"""Database snapshots (`VACUUM INTO`), their rotation, restore, and self-healing of a corrupt database.

Used by the worker (periodic snapshots, recovery on start) and by `claude-mem backup|restore`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import time
from urllib.parse import quote

from claude_mem import domain, paths
from claude_mem.store import db
from claude_mem.store.salvage import salvage_capture

log = logging.getLogger("claude_mem.worker")



class BackupError(domain.ClaudeMemError):
    """A snapshot or restore could not be made; the message says why."""


backups_dir = paths.backups_dir
list_backups = paths.list_backups


def utc_stamp(when: float | None = None) -> str:
    return time.strftime(paths.BACKUP_STAMP, time.gmtime(time.time() if when is None else when))


def check_database(path: str, require_schema: bool = True) -> str | None:
    """None when `path` is a healthy SQLite database (with our tables if `require_schema`), else why not."""
    if not os.path.exists(path):
        return "missing"
    try:
        # The live database may have a WAL to recover, which needs write access; snapshots do not.
        mode = "ro" if require_schema else "rw"
        conn = sqlite3.connect(f"file:{quote(path)}?mode={mode}", uri=True, timeout=10)
    except sqlite3.Error as exc:
        return f"cannot open: {exc}"
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if [tuple(row) for row in rows] != [("ok",)]:
            return "quick_check: " + "; ".join(str(row[0]) for row in rows[:5])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if require_schema and "pending_events" not in tables:
            return "not a claude-mem database (no pending_events table)"
    except sqlite3.Error as exc:
        return f"unreadable: {exc}"
    finally:
        conn.close()
    return None


def snapshot(data_dir: str, keep: int) -> str:
    """Write a consistent snapshot of the database with `VACUUM INTO`, then keep only the newest `keep`."""
    source = db.db_path(data_dir)
    if not os.path.exists(source):
        raise BackupError(f"no database to back up at {source}")
    directory = backups_dir(data_dir)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    target = os.path.join(directory, paths.backup_name(utc_stamp()))
    temp = f"{target}.{os.getpid()}.tmp"
    conn = db.connect(source)
    try:
        conn.execute("VACUUM INTO ?", (temp,))
    except sqlite3.Error as exc:
        _unlink(temp)
        raise BackupError(f"snapshot failed: {exc}") from exc
    finally:
        conn.close()
    problem = check_database(temp)
    if problem is not None:  # never let a damaged copy in, let alone rotate a good one out for it
        _unlink(temp)
        raise BackupError(f"snapshot failed its check ({problem}); the existing backups are kept")
    os.chmod(temp, 0o600)
    os.replace(temp, target)
    rotate(data_dir, keep, protect=None if holds_memory(target) else newest_with_memory(data_dir))
    return target


def holds_memory(path: str) -> bool:
    """Does the database at `path` hold any session or observation?"""
    return bool(_ask(path, "SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM observations)"))


def _ask(path: str, sql: str) -> object:
    """One value from a read-only look at `path`; None when it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return None
    try:
        return conn.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def newest_with_memory(data_dir: str) -> str | None:
    """The newest healthy backup that holds memory."""
    for path in reversed(list_backups(data_dir)):
        if check_database(path) is None and holds_memory(path):
            return path
    return None


def rotate(data_dir: str, keep: int, protect: str | None = None) -> list[str]:
    """Delete all but the newest `keep` snapshots (at least one is always kept), never `protect`: an
    empty database's snapshots must not push the last backup holding memory out. Returns the deleted."""
    backups = list_backups(data_dir)
    doomed = [path for path in backups[: max(0, len(backups) - max(1, keep))] if path != protect]
    for path in doomed:
        _unlink(path)
    return doomed


def newest_good_backup(data_dir: str) -> str | None:
    for path in reversed(list_backups(data_dir)):
        if check_database(path) is None:
            return path
        log.warning("backup %s is not usable; trying an older one", path)
    return None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _empty(path: str) -> bool:
    """A database file with no capture schema in it (0 bytes, or a fresh file nothing was written to)."""
    return _ask(path, "SELECT count(*) FROM sqlite_master WHERE name = 'pending_events'") == 0


def move_aside(data_dir: str, label: str) -> str:
    """Rename the database and its WAL/SHM files to `claude-mem.db.<label>-<stamp>`; returns the new path."""
    source = db.db_path(data_dir)
    target = f"{source}.{label}-{utc_stamp()}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(source + suffix):
            os.replace(source + suffix, target + suffix)
    return target


def install_copy(data_dir: str, snapshot_path: str) -> None:
    """Copy a snapshot into place as the database (atomically: readers see the old or the new file)."""
    target = db.db_path(data_dir)
    temp = f"{target}.{os.getpid()}.restore.tmp"
    shutil.copyfile(snapshot_path, temp)
    os.chmod(temp, 0o600)
    for suffix in ("-wal", "-shm"):
        _unlink(target + suffix)
    os.replace(temp, target)


def restore(data_dir: str, snapshot_path: str) -> str | None:
    """Replace the database with a checked snapshot; the old database is kept aside (its new path)."""
    problem = check_database(snapshot_path)
    if problem is not None:
        raise BackupError(f"{snapshot_path} cannot be restored: {problem}")
    kept = move_aside(data_dir, "before-restore") if os.path.exists(db.db_path(data_dir)) else None
    install_copy(data_dir, snapshot_path)
    return kept


def recover_if_corrupt(data_dir: str) -> dict[str, object] | None:
    """On worker start: a database that fails `quick_check` is moved aside and the newest good backup
    restored; so is a missing, empty or truncated one when a backup holds memory (a fresh install
    has none). Returns the recovery record (also written to recovery.json), or None when all is well.
    The spool and quarantine are not touched, so events captured since the backup are re-ingested."""
    path = db.db_path(data_dir)
    problem = check_database(path, require_schema=False)
    if problem is None and not _empty(path):
        return None
    if problem is None or problem == "missing":
        restored = newest_with_memory(data_dir)
        if restored is None:
            return None  # a fresh install, or memory deliberately emptied and its backups rewritten
        problem = "the database is missing" if problem else "the database is empty"
    else:
        restored = newest_good_backup(data_dir)
    corrupt = move_aside(data_dir, "corrupt") if os.path.exists(path) else ""
    if restored is not None:
        install_copy(data_dir, restored)
    try:
        salvaged: dict[str, int] | str = salvage_capture(corrupt, path) if corrupt else "nothing to salvage"
    except Exception as exc:  # the corrupt copy may be beyond reading: the backup alone must do
        salvaged = f"nothing readable ({type(exc).__name__}: {exc})"
    record: dict[str, object] = {
        "at": domain.utc_stamp(),
        "problem": problem,
        "corrupt_copy": corrupt,
        "restored_from": restored,
        "salvaged": salvaged,
        "note": (
            f"database restored from {os.path.basename(restored)}; readable capture rows and the spool were kept"
            if restored else "no usable backup: started with an empty database plus readable capture rows"
        ),
    }
    log.error(
        "DATABASE CORRUPT (%s): moved to %s; %s; salvaged %s", problem, corrupt,
        f"restored newest good backup {restored}" if restored else "no usable backup, starting empty", salvaged,
    )
    recovery_path = os.path.join(data_dir, paths.RECOVERY_FILENAME)
    with open(recovery_path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2, sort_keys=True)
    os.replace(recovery_path + ".tmp", recovery_path)
    return record

