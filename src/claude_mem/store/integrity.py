"""The full-text indexes' own integrity check, and their rebuild from the tables they index.

`PRAGMA quick_check` verifies b-trees, not what FTS5 keeps in them: bytes damaged inside an index's
shadow tables pass it, and then every insert into the indexed table fails ("database disk image is
malformed"). The worker checks at start and after a batch it could not store; an index found
broken is rebuilt from its content table, which holds the truth (DESIGN §2: derived data).
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field

from claude_mem.store.migrations import FTS_COLUMNS
from claude_mem.store.transaction import transaction

log = logging.getLogger("claude_mem.store")

INDEXES = tuple(f"{table}_fts" for table in FTS_COLUMNS)
# What a damaged FTS5 index raises: SQLite's errors, or MemoryError when a garbled segment claims a
# huge size (seen in about 1 of 70 random damages).
DAMAGE = (sqlite3.DatabaseError, MemoryError)


def broken_indexes(conn: sqlite3.Connection) -> list[str]:
    """The full-text indexes whose integrity check fails."""
    broken = []
    for index in INDEXES:
        try:
            conn.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")
        except DAMAGE as exc:
            log.error("full-text index %s failed its integrity check: %s", index, exc)
            broken.append(index)
    return broken


def rebuild(conn: sqlite3.Connection, indexes: list[str]) -> None:
    """Rebuild `indexes` from their content tables, in one transaction. When the damage stops FTS5
    from even opening an index, its segment tables are reset to an empty index first (the index is
    derived data: its content table holds everything it is rebuilt from)."""
    with transaction(conn):
        for index in indexes:
            try:
                with transaction(conn):
                    conn.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")
            except DAMAGE:
                conn.execute(f"DELETE FROM {index}_data")
                conn.execute(f"DELETE FROM {index}_idx")
                conn.executemany(f"INSERT INTO {index}_data (id, block) VALUES (?, ?)", _empty_index_rows())
                conn.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")


def _empty_index_rows() -> list[tuple[int, bytes]]:
    """The records of an empty FTS5 index, as this SQLite writes them (FTS5 will not even open an
    index whose structure record is damaged or missing)."""
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute("CREATE VIRTUAL TABLE empty USING fts5(text)")
        return scratch.execute("SELECT id, block FROM empty_data").fetchall()
    finally:
        scratch.close()


@dataclass
class Repair:
    """What `repair_indexes` did: indexes rebuilt, and those still broken with the reason."""

    rebuilt: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    error: str = ""


def repair_indexes(conn: sqlite3.Connection) -> Repair:
    """Check every index and rebuild the broken ones."""
    broken = broken_indexes(conn)
    if not broken:
        return Repair()
    try:
        rebuild(conn, broken)
    except DAMAGE as exc:
        log.error("rebuilding %s failed: %s", ", ".join(broken), exc)
        return Repair(broken=broken, error=f"{type(exc).__name__}: {exc}")
    still = broken_indexes(conn)
    if still:
        return Repair(broken=still, error="still failing its integrity check after a rebuild")
    log.warning("rebuilt the damaged full-text index(es) %s from their tables", ", ".join(broken))
    return Repair(rebuilt=broken)
