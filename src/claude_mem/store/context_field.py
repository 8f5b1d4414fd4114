"""The context field of the full-text indexes (m017, issue 29): the work the triggers leave to the worker.

A row is indexed with its neighbours' text by the triggers when it is written (`store.context_schema`):
with the rows before it at once. That it is the newest row *after* them reaches their context here
(`refresh_queued`), off the write path: the insert triggers only queue them (`context_queue`), so the
observer's write stays within 1.3x of its cost before the context field (`python -m bench write`).
An edit, a forget and a prompt made private rewrite the neighbours at once, in the triggers.

Rows stored before m017 are indexed here too, newest first, a batch per transaction (`fill`): by
`connect` at once when the store is small (`SYNC_ROWS`), else by the worker (`worker.context_fill`),
while searches find the rows indexed so far and say how many are not yet (`waiting`).
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


def _index(conn: sqlite3.Connection, table: str, ids: list[int], delete: bool = False) -> None:
    """Add rows `ids` of `table` to its full-text index as its search view reads them (own columns and the
    stored context), or with `delete` take them out as they were added; rows with no context are not in it."""
    columns = ", ".join(INDEXED[table])
    command = (f"{table}_fts, ", "'delete', ") if delete else ("", "")
    conn.execute(f"INSERT INTO {table}_fts ({command[0]}rowid, {columns}) SELECT {command[1]}id, {columns}"
                 f" FROM {table}_search WHERE id IN ({_marks(ids)})", ids)


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
                conn.execute(f"INSERT INTO search_context (kind, row_id, text) SELECT ?, v.id, v.text"
                             f" FROM {table}_context v WHERE v.id IN ({_marks(ids)})", (kind, *ids))
                _index(conn, table, ids)
                done += len(ids)
            if len(rows) < batch:
                conn.execute("DELETE FROM search_fill WHERE kind = ?", (kind,))
            else:
                conn.execute("UPDATE search_fill SET below = ? WHERE kind = ?", (rows[-1][0], kind))
    return done


def refresh_queued(conn: sqlite3.Connection, batch: int | None = None) -> int:
    """Rewrite the context of up to `batch` rows a newer neighbour joined (`context_queue`, filled by the
    insert triggers), in one transaction; returns how many (0: none waits)."""
    batch = batch or BATCH
    done = 0
    with transaction(conn):
        queued = conn.execute("SELECT kind, row_id FROM context_queue LIMIT ?", (batch,)).fetchall()
        for kind, table in TABLES.items():
            ids = [row_id for queued_kind, row_id in queued if queued_kind == kind]
            if not ids:
                continue
            marks = _marks(ids)
            # only rows in the index (a row waiting for `fill` gets its whole context then)
            _index(conn, table, ids, delete=True)
            conn.execute(f"UPDATE search_context SET text = (SELECT v.text FROM {table}_context v"
                         f" WHERE v.id = search_context.row_id) WHERE kind = ? AND row_id IN ({marks})", (kind, *ids))
            _index(conn, table, ids)
            conn.execute(f"DELETE FROM context_queue WHERE kind = ? AND row_id IN ({marks})", (kind, *ids))
            done += len(ids)
    return done


def queued(conn: sqlite3.Connection) -> int:
    """How many rows wait for a newer neighbour's text in their context."""
    return int(conn.execute("SELECT COUNT(*) FROM context_queue").fetchone()[0])


def settle(conn: sqlite3.Connection) -> None:
    """Everything the worker would do, done now: every stored row indexed, every context current."""
    while fill(conn) or filling(conn):
        pass
    while refresh_queued(conn):
        pass


def waiting(conn: sqlite3.Connection) -> int:
    """How many rows stored before m017 are not in the full-text indexes yet (a range count per kind)."""
    total = 0
    for kind, below in conn.execute("SELECT kind, below FROM search_fill").fetchall():
        total += conn.execute(f"SELECT COUNT(*) FROM {TABLES[kind]} WHERE id < ?", (below,)).fetchone()[0]
    return int(total)


def filling(conn: sqlite3.Connection) -> bool:
    """True while rows stored before m017 wait to be indexed (one look-up; False on a read-only open of a
    database from before m017, which has no such rows to wait for)."""
    try:
        return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM search_fill)").fetchone()[0])
    except sqlite3.OperationalError:
        return False


def fill_small(conn: sqlite3.Connection) -> None:
    """Index every waiting row now when they are few (`SYNC_ROWS`); else leave them to the worker."""
    if filling(conn) and waiting(conn) <= SYNC_ROWS:
        while filling(conn):
            fill(conn)
