"""The layout of the data dir, defined once: every file name the parts share. Stdlib only."""

import os

# Everything claude-mem writes (database, WAL, backups, spool, logs, quarantine, settings, worker.json)
# is its user's alone: files 0600, directories 0700.
PRIVATE_UMASK = 0o077


def private_files() -> None:
    """Set the process umask so every file and directory it creates from now on is owner-only."""
    os.umask(PRIVATE_UMASK)

DB_FILENAME = "claude-mem.db"
WORKER_INFO = "worker.json"
WORKER_LOCK = "worker.lock"
RECOVERY_FILENAME = "recovery.json"
SPOOL_DIR = "spool"
QUARANTINE_DIR = "quarantine"
CACHE_DIR = "cache"  # what a process may rebuild at any time (compiled patterns); never user data

# Snapshots: backups/claude-mem-<UTC stamp>.db, so the names sort by time. `forget` rewrites every
# file that matches; a second definition could silently stop it from scrubbing renamed backups.
BACKUP_DIR = "backups"
BACKUP_PREFIX = "claude-mem-"
BACKUP_SUFFIX = ".db"
BACKUP_STAMP = "%Y%m%dT%H%M%SZ"


def db_path(data_dir: str) -> str:
    return os.path.join(data_dir, DB_FILENAME)


def cache_dir(data_dir: str) -> str:
    return os.path.join(data_dir, CACHE_DIR)


def backups_dir(data_dir: str) -> str:
    return os.path.join(data_dir, BACKUP_DIR)


def backup_name(stamp: str) -> str:
    return f"{BACKUP_PREFIX}{stamp}{BACKUP_SUFFIX}"


def is_backup_name(name: str) -> bool:
    return name.startswith(BACKUP_PREFIX) and name.endswith(BACKUP_SUFFIX)


def list_backups(data_dir: str) -> "list[str]":
    """Snapshot paths, oldest first (the UTC stamp in the name sorts chronologically)."""
    directory = backups_dir(data_dir)
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [os.path.join(directory, name) for name in sorted(names) if is_backup_name(name)]
