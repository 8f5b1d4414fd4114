"""What the status line counts (`claude-mem statusline`, run every few hundred ms): two index-only reads.

Kept apart from `stats` so the status line loads nothing but the store's connection. Stdlib only.
"""

from __future__ import annotations

from claude_mem.store.db import DatabaseError, Store


def status_counts(conn: Store, project: str) -> tuple[int, int, int]:
    """(observations of `project`, events waiting or in progress, failed events): the status line.
    The project's count is the catalog's (m015; a database from before it is counted over the
    `observations_project` index), the queue's over `pending_events_queue`: never the rows."""
    try:
        row = conn.execute("SELECT observations FROM projects WHERE key = ?", (project,)).fetchone()
        notes = int(row[0]) if row else 0
    except DatabaseError:  # a read-only open of a database from before m015
        notes = conn.execute("SELECT COUNT(*) FROM observations WHERE project = ?", (project,)).fetchone()[0]
    counts = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events"
                               " WHERE status IN ('pending', 'claimed', 'failed') GROUP BY status").fetchall())
    return notes, counts.get("pending", 0) + counts.get("claimed", 0), counts.get("failed", 0)
