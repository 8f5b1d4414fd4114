"""The hook's log and quarantine: plain file appends, no `logging` (it costs milliseconds to import).

`logs/hooks.log` gets one line per problem (rotated once past 1 MB). `quarantine/` keeps a
bounded, cleaned copy of input the hook could not store: private spans stripped and secrets
redacted like everything else, at most `QUARANTINE_BYTES` per copy and `QUARANTINE_KEEP` copies.
Log lines carry our own messages only, never payload content. Stdlib only.
"""

import os
import time

from claude_mem.domain import utc_stamp

LOG_FILE = ("logs", "hooks.log")
LOG_MAX_BYTES = 1_000_000
QUARANTINE_DIR = "quarantine"
QUARANTINE_BYTES = 64 * 1024
QUARANTINE_KEEP = 50
_UNESCAPE = (("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t"), ("\\u003c", "<"), ("\\u003e", ">"), ("\\/", "/"), ('\\"', '"'))


def log_path(data_dir: str) -> str:
    return os.path.join(data_dir, *LOG_FILE)


def log(data_dir: str, hook: str, message: str) -> None:
    """Append one line to `logs/hooks.log`; never raises."""
    stamp = utc_stamp()
    line = f"{stamp} pid={os.getpid()} hook={hook} {' '.join(message.split())}\n"
    path = log_path(data_dir)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            if os.path.getsize(path) > LOG_MAX_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError as exc:
        from claude_mem.capture import trouble

        state = trouble.classify(exc)
        if state == trouble.DISK_FULL:  # the log is the first to go: `status` says why it is empty
            trouble.note(data_dir, state, f"cannot write {path}: {exc}")


def _quarantine_name(data_dir: str, hook: str, suffix: str) -> str:
    directory = os.path.join(data_dir, QUARANTINE_DIR)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return os.path.join(directory, f"{time.time_ns():020d}-{os.getpid()}-{hook}{suffix}")


class _Locked:
    """The quarantine directory locked (`flock` on the directory itself: no lock file) while a copy is added
    and the oldest pruned: the cap holds however many hooks quarantine at once."""

    def __init__(self, data_dir: str) -> None:
        self.fd = -1
        try:
            import fcntl

            self.fd = os.open(os.path.join(data_dir, QUARANTINE_DIR), os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (OSError, ImportError):
            pass

    def __enter__(self) -> "_Locked":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the lock


def cleaned_copy(raw: bytes) -> bytes:
    """What may be kept of unusable input: the first QUARANTINE_BYTES, private spans and secrets removed."""
    head = raw[: QUARANTINE_BYTES + 4096].decode("utf-8", "replace")
    # Undo the JSON escapes that would hide a tag or a `NAME=value` line from the patterns.
    for escaped, plain in _UNESCAPE:
        head = head.replace(escaped, plain)
    from claude_mem import privacy

    text = privacy.clean(head)
    return text.encode("utf-8", "replace")[:QUARANTINE_BYTES]


def quarantine(data_dir: str, hook: str, raw: bytes) -> str | None:
    """Keep a bounded, cleaned copy of `raw`; returns its path (None when it could not be written: then no
    file is left, not even an empty one)."""
    try:
        path = _quarantine_name(data_dir, hook, ".txt")
        from claude_mem.capture.durable import write_file

        with _Locked(data_dir):
            write_file(os.path.dirname(path), os.path.basename(path), cleaned_copy(raw))
            prune(data_dir)
        return path
    except OSError:
        return None


def quarantine_file(data_dir: str, hook: str, source: str) -> None:
    """Move an already-cleaned file (a damaged spool file) into quarantine."""
    try:
        target = _quarantine_name(data_dir, hook, ".jsonl")
        with _Locked(data_dir):
            os.replace(source, target)
            prune(data_dir)
    except OSError:
        pass


def prune(data_dir: str) -> None:
    """Keep only the newest QUARANTINE_KEEP copies (hidden files, the lock and temp files, are not copies)."""
    directory = os.path.join(data_dir, QUARANTINE_DIR)
    names = sorted(name for name in os.listdir(directory) if not name.startswith("."))
    for name in names[: max(len(names) - QUARANTINE_KEEP, 0)]:
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass


def capture_report(data_dir: str) -> dict[str, object]:
    """What `status` shows about capture: spooled records waiting for the worker, quarantined input."""
    from claude_mem.capture import spool

    quarantine_dir = os.path.join(data_dir, QUARANTINE_DIR)
    quarantined = len([name for name in os.listdir(quarantine_dir) if not name.startswith(".")]) \
        if os.path.isdir(quarantine_dir) else 0
    from claude_mem.capture.trouble import store_conditions

    return {"spooled": spool.count(data_dir), "quarantined": quarantined, "hooks_log": log_path(data_dir),
            "conditions": store_conditions(data_dir)}
