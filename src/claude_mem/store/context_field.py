"""The context field of the full-text indexes (m017, issue 29): indexing the rows stored before it.

Rows written since m017 are indexed with their neighbours' text by triggers (`store.context_schema`).
Rows stored before are indexed here, newest first, a batch per transaction: by `connect` at once when
the store is small (`SYNC_ROWS`), else by the worker (`worker.context_fill`), while searches find the
rows indexed so far and say how many are not yet (`waiting`).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the driver itself: `connect` imports this module on the hook path

from claude_mem.store.migrations import FTS_COLUMNS
from claude_mem.store.transaction import transaction

# kind (search_context.kind) → table
TABLES = {0: "observations", 1: "summaries", 2: "prompts"}
BATCH = 1000
# Up to this many rows to index, `connect` indexes them itself (~0.2 s a thousand).
SYNC_ROWS = 5000
# What each FTS table indexes, in column order: its own columns, then its neighbours' text.
INDEXED = {table: (*columns, "context") for table, columns in FTS_COLUMNS.items()}


def _marks(values: list[int]) -> str:
    return ", ".join("?" for _ in values)


def fill(conn: sqlite3.Connection, batch: int | None = None) -> int:
    """Index up to `batch` rows of each kind stored before m017 (newest first), in one transaction;
    returns how many were indexed (0 with `waiting` 0: all done)."""
    done, batch = 0, batch or BATCH
    with transaction(conn):
        for kind, below in conn.execute("SELECT kind, below FROM search_fill ORDER BY kind").fetchall():
            table = TABLES[kind]
            rows = conn.execute(
                f"SELECT id, EXISTS (SELECT 1 FROM search_context c WHERE c.kind = ? AND c.row_id = t.id)"
                f" FROM {table} t WHERE id < ? ORDER BY id DESC LIMIT ?", (kind, below, batch)).fetchall()
            ids = [row_id for row_id, indexed in rows if not indexed]
            if ids:
                columns = ", ".join(INDEXED[table])
                conn.execute(f"INSERT INTO search_context (kind, row_id, text) SELECT ?, v.id, v.text"
                             f" FROM {table}_context v WHERE v.id IN ({_marks(ids)})", (kind, *ids))
                conn.execute(f"INSERT INTO {table}_fts (rowid, {columns}) SELECT id, {columns} FROM {table}_search"
                             f" WHERE id IN ({_marks(ids)})", ids)
                done += len(ids)
            if len(rows) < batch:
                conn.execute("DELETE FROM search_fill WHERE kind = ?", (kind,))
            else:
                conn.execute("UPDATE search_fill SET below = ? WHERE kind = ?", (rows[-1][0], kind))
    return done


def waiting(conn: sqlite3.Connection) -> int:
    """How many rows stored before m017 are not in the full-text indexes yet (a range count per kind)."""
    total = 0
    for kind, below in conn.execute("SELECT kind, below FROM search_fill").fetchall():
        total += conn.execute(f"SELECT COUNT(*) FROM {TABLES[kind]} WHERE id < ?", (below,)).fetchone()[0]
    return int(total)


def filling(conn: sqlite3.Connection) -> bool:
    """True while rows stored before m017 wait to be indexed (one look-up)."""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM search_fill)").fetchone()[0])


def fill_small(conn: sqlite3.Connection) -> None:
    """Index every waiting row now when they are few (`SYNC_ROWS`); else leave them to the worker."""
    if filling(conn) and waiting(conn) <= SYNC_ROWS:
        while filling(conn):
            fill(conn)
