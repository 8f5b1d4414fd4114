"""When the data dir cannot take a write: the overflow spool, the state it records, and what to tell the user.

A hook whose event cannot be written (the disk or quota is full, the data dir is read-only, the
database is newer than this build) must neither lose the event nor fail Claude Code. It keeps the
record in the *overflow*: a private directory on another filesystem, tried in order
`$XDG_RUNTIME_DIR/claude-mem/<key>`, `/dev/shm/claude-mem-<uid>/<key>`, `$TMPDIR|/tmp/claude-mem-<uid>/<key>`
(`key`: a digest of the data dir's absolute path, so two data dirs never mix), capped at `OVERFLOW_BYTES`
in all. Files are written to a hidden temp name, fsynced and renamed (removed on failure): never an
empty or partial file. The worker's spool ingest (`store.capture.ingest_spool`), and the next
session-start or user-prompt hook that stores its event, move them back into `<data dir>/spool/`
(`drain`) once the data dir takes writes again; the worker stores them like any spooled record. The
condition clears when a database write succeeded and the overflow is empty.

The condition itself (`condition.json` in the overflow dir: state, reason, since, dropped) is what
`status`, `doctor` and `/health` read through `store_conditions` — a few `stat`s, no database. The
user hears of it once per session (`first_notice`): a `systemMessage` line Claude Code shows.
Stdlib only: the hooks import it.
"""

from __future__ import annotations

import errno
import os
import time

from claude_mem import paths
from claude_mem.capture import durable
from claude_mem.domain import utc_stamp
from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

DISK_FULL = "disk-full"
READ_ONLY = "read-only"
NEWER_SCHEMA = "newer-schema"
RECOVERED = "recovered"
OVERFLOW_BYTES = 16 * 1024 * 1024  # all overflow files of one data dir together
CONDITION_FILE = "condition.json"
DRAIN_BYTES = 1024 * 1024  # of overflow records moved back as one spool file
SUFFIX = ".jsonl"
RECOVERY_SHOWN_SECONDS = 7 * 86400  # a restore from backup is reported for a week
_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_READONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)
_SQLITE_READONLY, _SQLITE_CANTOPEN, _SQLITE_FULL = 8, 14, 13
_sequence = 0
write_file = durable.write_file


def newer_schema_message(found: int, known: int) -> str:
    return (f"this database was written by a newer claude-mem (schema v{found}, this build knows v{known}): "
            "upgrade claude-mem")


def classify(exc: BaseException, data_dir: str | None = None) -> str | None:
    """`DISK_FULL`, `READ_ONLY` or `NEWER_SCHEMA` when `exc` says the data dir cannot take a write; else None
    (busy, damaged, anything else). SQLite's "unable to open" counts as read-only only when `data_dir` is."""
    if getattr(exc, "condition", None) == NEWER_SCHEMA:  # `store.db.NewerSchema`
        return NEWER_SCHEMA
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        code &= 0xFF
        if code == _SQLITE_FULL:
            return DISK_FULL
        if code == _SQLITE_READONLY or (code == _SQLITE_CANTOPEN and data_dir is not None
                                        and os.path.isdir(data_dir) and not os.access(data_dir, os.W_OK)):
            return READ_ONLY
        return None
    if isinstance(exc, OSError):
        if exc.errno in _DISK_ERRNOS:
            return DISK_FULL
        if exc.errno in _READONLY_ERRNOS:
            return READ_ONLY
    text = str(exc).lower()
    if "disk is full" in text or "no space left" in text:
        return DISK_FULL
    if "readonly database" in text or "read-only file system" in text:
        return READ_ONLY
    return None


def _key(data_dir: str) -> str:
    from claude_mem.capture.digest import sha256_hex

    return sha256_hex(os.path.abspath(data_dir).encode("utf-8", "surrogateescape"))[:16]


def candidates(data_dir: str) -> list[str]:
    """Where this data dir's overflow may be, in the order a hook tries them."""
    uid = os.getuid()
    key = _key(data_dir)
    found: list[str] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        found.append(os.path.join(runtime, "claude-mem", key))
    found.append(os.path.join("/dev/shm", f"claude-mem-{uid}", key))
    temp = os.environ.get("TMPDIR")
    found.append(os.path.join(temp if temp and os.path.isabs(temp) else "/tmp", f"claude-mem-{uid}", key))
    return found


def _private_dir(path: str) -> bool:
    """`path` is a real directory of ours that nobody else may write or read (made if missing)."""
    try:
        for directory in (os.path.dirname(path), path):  # each level 0700 (makedirs leaves parents to the umask)
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                pass
            info = os.lstat(directory)
            if os.path.islink(directory) or not os.path.isdir(directory) or info.st_uid != os.getuid():
                return False  # someone else's, or a link: never write there
            if info.st_mode & 0o077:
                os.chmod(directory, 0o700)
    except OSError:
        return False
    return True


def _existing(data_dir: str) -> list[str]:
    return [path for path in candidates(data_dir) if os.path.isdir(path)]


def _files(directory: str) -> list[str]:
    try:
        return sorted(os.path.join(directory, name) for name in os.listdir(directory)
                      if name.endswith(SUFFIX) and not name.startswith("."))
    except OSError:
        return []


def _size(paths: list[str]) -> int:
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


def keep(data_dir: str, record: dict[str, Any], state: str, reason: str) -> str | None:
    """Keep `record` in the overflow and note `state`; returns the file, or None when every place is full
    (the drop is counted in the condition)."""
    global _sequence
    line = (jsontext.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "replace")
    for directory in candidates(data_dir):
        if not _private_dir(directory):
            continue
        if _size(_files(directory)) + len(line) > OVERFLOW_BYTES:
            continue
        _sequence += 1
        try:
            path = write_file(directory, f"{time.time_ns():020d}-{os.getpid()}-{_sequence}{SUFFIX}", line)
        except OSError:
            continue
        note(data_dir, state, reason, directory)
        return path
    note(data_dir, state, reason, None, dropped=1)
    return None


def _read_condition(directory: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(directory, CONDITION_FILE), "rb") as handle:
            value = jsontext.loads(handle.read())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def note(data_dir: str, state: str, reason: str, directory: str | None = None, dropped: int = 0) -> None:
    """Record that the data dir is in `state` (kept `since` the first time); never raises."""
    for place in [directory] if directory else candidates(data_dir):
        if directory is None and not _private_dir(place):
            continue
        current = _read_condition(place) or {}
        if current.get("state") == state and not dropped:
            return  # already noted: no write on every hook
        value = {"state": state, "reason": reason, "data_dir": data_dir,
                 "since": current.get("since") if current.get("state") == state else utc_stamp(),
                 "dropped": int(current.get("dropped") or 0) + dropped}
        try:
            write_file(place, CONDITION_FILE, jsontext.dumps(value).encode("utf-8"))
            return
        except OSError:
            continue


def first_notice(data_dir: str, session_id: object, state: str, reason: str = "") -> str | None:
    """The line to show the user, once per session and state (None when already shown)."""
    from claude_mem.capture.digest import sha256_hex

    marker = "." + state + "-" + sha256_hex(str(session_id).encode("utf-8", "replace"))[:24]
    for directory in candidates(data_dir):
        if not _private_dir(directory):
            continue
        try:
            os.close(os.open(os.path.join(directory, marker), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            return None
        except OSError:
            continue
        break
    return notice_text(data_dir, state, reason)


def notice_text(data_dir: str, state: str, reason: str = "") -> str:
    """The user's line for `state` (`reason`: the condition's, from `store_conditions`)."""
    if state == DISK_FULL:
        return f"claude-mem: the disk of {data_dir} is full: capture paused, events kept aside ({reason}; " \
               "claude-mem status)"
    if state == READ_ONLY:
        return f"claude-mem: {data_dir} is read-only: capture is off, memory is still shown ({reason})"
    return f"claude-mem: {reason}; capture paused, events kept in the spool"


def waiting_count(data_dir: str) -> int:
    """Events not in the database yet: in the overflow and in the data dir's spool."""
    from claude_mem.capture import spool

    try:
        spooled = spool.count(data_dir)
    except OSError:
        spooled = 0
    return len(waiting_files(data_dir)) + spooled


def waiting_files(data_dir: str) -> list[str]:
    """Overflow files not yet moved back into the data dir, oldest first."""
    found: list[str] = []
    for directory in _existing(data_dir):
        found += _files(directory)
    return sorted(found, key=os.path.basename)


def drain(data_dir: str, spool_dir: str) -> int:
    """Move overflow files back into `spool_dir`: up to `DRAIN_BYTES` of them as one spool file (one line a
    record: a full disk has little room for many small files), written durably before the originals are
    deleted; stops at the first write that fails (the disk still full). Returns how many records moved.
    The condition stays until a database write succeeds (`clear`)."""
    moved = 0
    waiting = waiting_files(data_dir)
    while waiting:
        batch: list[str] = []
        data = b""
        for path in waiting:
            try:
                with open(path, "rb") as handle:
                    line = handle.read()
            except OSError:
                continue
            if batch and len(data) + len(line) > DRAIN_BYTES:
                break
            batch.append(path)
            data += line if line.endswith(b"\n") else line + b"\n"
        if not batch:
            break
        try:
            os.makedirs(spool_dir, mode=0o700, exist_ok=True)
            write_file(spool_dir, os.path.basename(batch[0]), data)
        except OSError:
            return moved
        for path in batch:
            try:
                os.unlink(path)
            except OSError:
                pass
        moved += len(batch)
        waiting = waiting[waiting.index(batch[-1]) + 1:]
    return moved


def clear(data_dir: str) -> None:
    """Forget the condition and the once-per-session markers once the database took a write again and nothing
    waits in the overflow (a later trouble is a new one, told again)."""
    for directory in _existing(data_dir):
        if _files(directory):
            continue
        for name in os.listdir(directory):
            if name == CONDITION_FILE or name.startswith("."):
                try:
                    os.unlink(os.path.join(directory, name))
                except OSError:
                    pass


def active(data_dir: str) -> bool:
    """Cheap: is any condition recorded (a few `stat`s)?"""
    return any(os.path.exists(os.path.join(path, CONDITION_FILE)) for path in candidates(data_dir))


def store_conditions(data_dir: str, known_schema: int | None = None,
                     found_schema: int | None = None) -> list[dict[str, Any]]:
    """What keeps the store from working normally, for `/health`, `status` and `doctor`: a list of
    `{"state": "disk-full"|"read-only"|"newer-schema"|"recovered", "reason": str, "since": iso, "waiting": n}`
    (`waiting`: events not in the database yet, in the overflow or the spool). Empty when all is well. Reads
    a few small files, no database: the database's schema comes as `found_schema` (`store.db.conditions`
    reads it), a newer-schema entry when it is above this build's `known_schema`."""
    found: list[dict[str, Any]] = []
    waiting = waiting_count(data_dir)
    for directory in _existing(data_dir):
        condition = _read_condition(directory)
        if condition and condition.get("state") in (DISK_FULL, READ_ONLY, NEWER_SCHEMA):
            state = str(condition["state"])
            reason = {DISK_FULL: f"disk full, {waiting} event(s) waiting",
                      READ_ONLY: f"data dir read-only, capture off, {waiting} event(s) waiting"}.get(
                state, f"{condition.get('reason')}; {waiting} event(s) waiting in the spool")
            if condition.get("dropped"):
                reason += f"; {condition['dropped']} event(s) lost (overflow full)"
            found.append({"state": state, "reason": reason, "since": str(condition.get("since") or ""),
                          "waiting": waiting})
            break
    outside = len(waiting_files(data_dir))
    if not found and outside:
        found.append({"state": DISK_FULL, "reason": f"{outside} event(s) waiting outside the data dir",
                      "since": "", "waiting": waiting})
    if found_schema is not None and known_schema is not None and found_schema > known_schema \
            and not any(item["state"] == NEWER_SCHEMA for item in found):
        found.append({"state": NEWER_SCHEMA, "reason": newer_schema_message(found_schema, known_schema),
                      "since": "", "waiting": waiting})
    if not any(item["state"] == READ_ONLY for item in found) and os.path.isdir(data_dir) \
            and not os.access(data_dir, os.W_OK):
        found.append({"state": READ_ONLY, "reason": "data dir read-only, capture off", "since": "", "waiting": waiting})
    recovered = _recovery(data_dir)
    if recovered is not None:
        found.append(recovered)
    return found


def _recovery(data_dir: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(data_dir, paths.RECOVERY_FILENAME), "rb") as handle:
            value = jsontext.loads(handle.read())
        since = str(value.get("at") or "")
        when = time.mktime(time.strptime(since, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except (OSError, ValueError, AttributeError, OverflowError):
        return None
    if time.time() - when > RECOVERY_SHOWN_SECONDS:
        return None
    return {"state": RECOVERED, "reason": f"{value.get('problem')}; {value.get('note')}", "since": since, "waiting": 0}
