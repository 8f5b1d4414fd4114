"""The layout of the data dir, defined once: every file name the parts share. Stdlib only."""

import io  # noqa: F401  (for the annotation of open_regular; always loaded)
import os
import stat  # loaded by os already

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


# -- reading a file someone handed us (imports) -----------------------------------------------------
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def not_regular(mode: int) -> "str | None":
    """What a file of `st_mode` is when it is not a regular file ("a FIFO", ...), else None."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def refused(path: str, kind: str) -> OSError:
    return OSError(22, f"not a regular file ({kind}); refused: reading it could block or never end", path)


def require_regular(path: str) -> None:
    """OSError, with a clear strerror, unless `path` (its symlinks followed) is a regular file. Looks only
    (stat): a FIFO is never opened, so never waited on."""
    kind = not_regular(os.stat(path).st_mode)
    if kind is not None:
        raise refused(path, kind)


def open_regular(path: str) -> "io.BufferedReader":
    """`open(path, "rb")` for a regular file only (symlinks followed to one): a device (/dev/zero), FIFO,
    socket or directory raises OSError at once. Opened non-blocking and checked again on the open file,
    so a FIFO put in its place meanwhile is not waited on either."""
    require_regular(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise refused(path, kind)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
