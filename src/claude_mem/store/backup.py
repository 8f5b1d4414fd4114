"""Database snapshots (`VACUUM INTO`), their rotation, restore, and self-healing of a corrupt database.

Used by the worker (periodic snapshots, recovery on start) and by `claude-mem backup|restore`.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from claude_mem import domain, paths
from claude_mem.store import db
from claude_mem.store.salvage import salvage_capture

log = logging.getLogger("claude_mem.worker")


class BackupError(domain.ClaudeMemError):
    """A snapshot or restore could not be made; the message says why."""


backups_dir = paths.backups_dir

# The wall clock every snapshot decision reads (tests set a clock that runs years ahead).
wall_clock: Callable[[], float] = time.time
# A snapshot whose recorded time is this far past the wall clock was made under a clock that ran ahead.
FUTURE_SLACK_S = 300.0
META_TABLE = "backup_snapshot"


def utc_stamp(when: float | None = None) -> str:
    return time.strftime(paths.BACKUP_STAMP, time.gmtime(wall_clock() if when is None else when))


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
    """Write a consistent snapshot of the database with `VACUUM INTO`, then keep only the newest `keep`.

    The snapshot records inside itself when it was made and a sequence number one past every existing
    snapshot's (see `Made`): rotation and "is one due" go by that, never by file names or mtimes, so a
    clock that ran ahead (or back) cannot make a fresh snapshot look old and delete it."""
    source = db.db_path(data_dir)
    if not os.path.exists(source):
        raise BackupError(f"no database to back up at {source}")
    directory = backups_dir(data_dir)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with _locked(directory):  # a CLI backup and the worker's: neither rotates out what the other just made
        made = Made(seq=1 + max((entry.made.seq for entry in survey(data_dir)), default=0), at=wall_clock())
        target = _free_name(directory, made.at)
        temp = f"{target}.{os.getpid()}.tmp"
        conn = db.connect(source)
        try:
            conn.execute("VACUUM INTO ?", (temp,))
        except sqlite3.Error as exc:
            _unlink(temp)
            raise BackupError(f"snapshot failed: {exc}") from exc
        finally:
            conn.close()
        problem = _stamp(temp, made) or check_database(temp)
        if problem is not None:  # never let a damaged copy in, let alone rotate a good one out for it
            _unlink(temp)
            raise BackupError(f"snapshot failed its check ({problem}); the existing backups are kept")
        os.chmod(temp, 0o600)
        os.replace(temp, target)
        rotate(data_dir, keep, protect=target if holds_memory(target) else newest_with_memory(data_dir),
               made=target)
    return target


@dataclass(frozen=True)
class Made:
    """What a snapshot records about itself: its sequence (one past every earlier snapshot's), the wall
    time, and the boot it was made in with the seconds since that boot (true elapsed time, whatever the
    wall clock does). A snapshot from before this record existed reads as seq 0, timed by name and mtime."""

    seq: int
    at: float
    boot_id: str = ""
    boot_s: float = -1.0

    def age(self, now: float) -> float | None:
        """Seconds since this snapshot was made; None when unknowable (made in the future by the wall clock)."""
        if self.boot_id and self.boot_id == boot_id() and 0.0 <= self.boot_s <= boot_seconds():
            return boot_seconds() - self.boot_s
        if self.at > now + FUTURE_SLACK_S:
            return None
        return max(0.0, now - self.at)


@dataclass(frozen=True)
class Entry:
    path: str
    made: Made


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def boot_seconds() -> float:
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    return time.clock_gettime(clock) if clock is not None else time.monotonic()


def _stamp(temp: str, made: Made) -> str | None:
    """Record `made` inside the fresh copy (before it gets its name); None, or why it could not."""
    try:
        conn = sqlite3.connect(temp, isolation_level=None, timeout=10)
    except sqlite3.Error as exc:
        return f"cannot open: {exc}"
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (seq INTEGER NOT NULL, made_at REAL NOT NULL, "
                     "made_utc TEXT NOT NULL, boot_id TEXT NOT NULL, boot_s REAL NOT NULL)")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"DELETE FROM {META_TABLE}")
        conn.execute(f"INSERT INTO {META_TABLE} VALUES (?, ?, ?, ?, ?)",
                     (made.seq, made.at, utc_stamp(made.at), boot_id(), boot_seconds()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        return f"cannot record its time: {exc}"
    finally:
        conn.close()
    return None


def _unstamp(path: str) -> None:
    """Drop a snapshot's own record from a copy becoming the live database (the next snapshot writes its own)."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=10)
        try:
            conn.execute(f"DROP TABLE IF EXISTS {META_TABLE}")
        finally:
            conn.close()
    except sqlite3.Error as exc:  # harmless to keep: every snapshot replaces it
        log.warning("could not drop %s from %s: %s", META_TABLE, path, exc)


def read_made(path: str) -> Made:
    """What the snapshot at `path` records about itself (see `Made`)."""
    row = _ask_row(path, f"SELECT seq, made_at, boot_id, boot_s FROM {META_TABLE} ORDER BY seq DESC LIMIT 1")
    if row is not None:
        try:
            return Made(int(row[0]), float(row[1]), str(row[2] or ""), float(row[3]))
        except (TypeError, ValueError):
            pass
    named = _name_time(path)
    try:
        modified = os.path.getmtime(path)
    except OSError:
        modified = named if named is not None else 0.0
    return Made(0, min(modified, named) if named is not None else modified)


def _name_time(path: str) -> float | None:
    stamp = os.path.basename(path)[len(paths.BACKUP_PREFIX):][:len("20260101T000000Z")]
    try:
        return calendar.timegm(time.strptime(stamp, paths.BACKUP_STAMP))
    except ValueError:
        return None


def survey(data_dir: str) -> list[Entry]:
    """Every snapshot with what it records, oldest first by sequence (then recorded time, then name)."""
    entries = [Entry(path, read_made(path)) for path in paths.list_backups(data_dir)]
    return sorted(entries, key=lambda entry: (entry.made.seq, entry.made.at, entry.path))


def list_backups(data_dir: str) -> list[str]:
    """Snapshot paths, oldest first by what they record (not by their names, which a wrong clock wrote)."""
    return [entry.path for entry in survey(data_dir)]


def newest_age(data_dir: str) -> float | None:
    """Seconds since the newest snapshot that can be timed was made; None when there is none. A snapshot
    dated in the future is kept but does not count as recent."""
    now = wall_clock()
    for entry in reversed(survey(data_dir)):
        age = entry.made.age(now)
        if age is not None:
            return age
        log.warning("snapshot %s is dated in the future (%s); it is kept but does not count as recent",
                    entry.path, utc_stamp(entry.made.at))
        return None
    return None


def _free_name(directory: str, when: float) -> str:
    """`claude-mem-<stamp>.db`, or `claude-mem-<stamp>-<n>.db` when a snapshot already has that name (the
    clock went back, or two in one second): a new snapshot never replaces an older one by name."""
    base = paths.backup_name(utc_stamp(when))
    target = os.path.join(directory, base)
    number = 1
    while os.path.exists(target):
        number += 1
        target = os.path.join(directory, base[: -len(paths.BACKUP_SUFFIX)] + f"-{number}{paths.BACKUP_SUFFIX}")
    return target


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: snapshots are rare enough to go unlocked
        yield
        return
    fd = os.open(os.path.join(directory, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def holds_memory(path: str) -> bool:
    """Does the database at `path` hold any session or observation?"""
    return bool(_ask(path, "SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM observations)"))


def _ask(path: str, sql: str) -> object:
    """One value from a read-only look at `path`; None when it cannot be read."""
    row = _ask_row(path, sql)
    return None if row is None else row[0]


def _ask_row(path: str, sql: str) -> tuple[Any, ...] | None:
    """The first row from a read-only look at `path`; None when there is none or it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(sql).fetchone()
        return None if row is None else tuple(row)
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


def rotate(data_dir: str, keep: int, protect: str | None = None, made: str | None = None) -> list[str]:
    """Delete all but the newest `keep` snapshots by what they record (at least one is always kept),
    never `protect` (an empty database's snapshots must not push the last backup holding memory out),
    `made` (the snapshot just written) or the newest good one. Returns the deleted."""
    backups = list_backups(data_dir)
    spared = {protect, made if made else newest_good_backup(data_dir)}  # `made` was checked, and is the newest
    doomed = [path for path in backups[: max(0, len(backups) - max(1, keep))] if path not in spared]
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
    _unstamp(temp)
    for suffix in ("-wal", "-shm"):
        _unlink(target + suffix)
    os.replace(temp, target)


def restore(data_dir: str, snapshot_path: str) -> str | None:
    """Replace the database with a checked snapshot; the old database is kept aside (its new path)."""
    try:
        paths.require_regular(snapshot_path)  # SQLite would wait on a FIFO forever
    except OSError as exc:
        raise BackupError(f"{snapshot_path} cannot be restored: {exc.strerror or exc}") from None
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

