"""The spool: where a capture record goes when SQLite stays busy past the hook's 250 ms.

`append` writes one fsynced JSONL file per record under `<data dir>/spool/` (written to a hidden
temp name, then renamed: a reader never sees half a line, and concurrent hooks never interleave).
Only the worker ingests (`store.capture.ingest_spool`): it claims each file with an atomic rename,
applies its records in one transaction with dedup by event key, and deletes it after the commit. A crash at any point
leaves either the file or the rows, never neither. Stdlib only.
"""

from __future__ import annotations

import os
import time

from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

SPOOL_DIR = "spool"
SUFFIX = ".jsonl"
CLAIMED = ".ingesting"
_sequence = 0


def spool_dir(data_dir: str) -> str:
    return os.path.join(data_dir, SPOOL_DIR)


def append(data_dir: str, record: dict[str, Any]) -> str:
    """Durably store `record`; returns the spool file's path."""
    global _sequence
    _sequence += 1
    directory = spool_dir(data_dir)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    # Nanoseconds first: sorting the names replays records in capture order.
    line = (jsontext.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "replace")
    from claude_mem.capture.durable import write_file  # temp name, fsync, rename; no partial file on failure

    final = write_file(directory, f"{time.time_ns():020d}-{os.getpid()}-{_sequence}{SUFFIX}", line)
    _fsync_dir(directory)
    return final


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pending_files(data_dir: str) -> list[str]:
    """Spool files not yet ingested (including ones claimed by an ingest that died), oldest first."""
    try:
        names = os.listdir(spool_dir(data_dir))
    except FileNotFoundError:
        return []
    return sorted(
        os.path.join(spool_dir(data_dir), name)
        for name in names
        if not name.startswith(".") and (name.endswith(SUFFIX) or name.endswith(SUFFIX + CLAIMED))
    )


def read_records(path: str) -> tuple[list[dict[str, Any]], int]:
    """The records in one spool file, and how many lines were damaged (skipped)."""
    records: list[dict[str, Any]] = []
    damaged = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = jsontext.loads(raw.decode("utf-8"))
            except ValueError:
                damaged += 1
                continue
            if isinstance(record, dict) and record.get("kind") and record.get("content_session_id"):
                records.append(record)
            else:
                damaged += 1
    return records, damaged


def claim(path: str) -> str | None:
    """Take a pending file for ingestion (atomic rename); None when another ingest took it."""
    if path.endswith(CLAIMED):
        return path  # claimed by an ingest that died: ours to finish
    claimed = path + CLAIMED
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        return None
    return claimed


def count(data_dir: str) -> int:
    """Spooled records waiting for the worker (for `status`)."""
    return len(pending_files(data_dir))
