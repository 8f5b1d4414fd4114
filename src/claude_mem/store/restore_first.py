"""A lost database is restored before anything writes to it (issue 33): whoever opens the store first —
a hook, the CLI or the worker — finds a missing or 0-byte `claude-mem.db` beside backups (one `stat`
in `db.connect`), or a file that is not a database, and restores the newest good backup here
(`backup.recover_if_corrupt`: the damaged file kept aside, readable capture rows salvaged, recovery.json
written) before migrating. Once: openers queue on a lock of the data dir and look again, so only the
first restores. Stdlib only; the restore's own imports load only when it runs.
"""

from __future__ import annotations

import os


def restore_first(data_dir: str) -> dict[str, object] | None:
    """Before anything writes (hook, CLI or worker, whichever opens first): a missing, empty or unreadable
    database beside a good backup is restored (`backup.recover_if_corrupt`, which writes recovery.json).
    Once: openers wait on a lock of the data dir and look again. Returns the recovery record, None when
    nothing was restored."""
    import fcntl

    try:
        fd = os.open(data_dir, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        import logging

        from claude_mem.store import backup  # rare: the restore's imports stay off the hook's usual path

        # In a hook no logging is set up: its lines go to hooks.log (below), not to Claude Code's screen.
        logging.getLogger(backup.log.name).addHandler(logging.NullHandler())
        record = backup.recover_if_corrupt(data_dir)
    except Exception as exc:  # noqa: BLE001 - no restore: the open goes on and says what it meets
        _note(data_dir, f"restoring the database failed: {type(exc).__name__}: {exc}")
        return None
    finally:
        os.close(fd)  # releases the lock
    if record is not None:
        _note(data_dir, f"database {record['problem']}: {record['note']}")
    return record


def _note(data_dir: str, message: str) -> None:
    from claude_mem.capture import diagnostics

    diagnostics.log(data_dir, "store", message)
