"""What the status line counts (`claude-mem statusline`, run every few hundred ms): two index-only reads.

Kept apart from `stats` so the status line loads nothing but the store's connection and the context
reader (both on `_sqlite3` alone). Stdlib only.
"""

from __future__ import annotations

from claude_mem.store.context import observation_total
from claude_mem.store.db import Store


def status_counts(conn: Store, project: str) -> tuple[int, int, int]:
    """(observations of `project`, events waiting or in progress, failed events): the status line.
    The project's count is the catalog's (`observation_total`), the queue's over `pending_events_queue`:
    never the rows."""
    notes = observation_total(conn, project)
    counts = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events"
                               " WHERE status IN ('pending', 'claimed', 'failed') GROUP BY status").fetchall())
    return notes, counts.get("pending", 0) + counts.get("claimed", 0), counts.get("failed", 0)
