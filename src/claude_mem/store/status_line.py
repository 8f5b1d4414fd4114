"""What the status line counts (`claude-mem statusline`, run every few hundred ms): two index-only reads.

Kept apart from `stats` so the status line loads nothing but the store's connection. Stdlib only.
"""

from __future__ import annotations

from claude_mem.store.db import Store


def status_counts(conn: Store, project: str) -> tuple[int, int, int]:
    """(observations of `project`, events waiting or in progress, failed events): the status line.
    Both count over an index (`observations_project`, `pending_events_queue`), never the rows."""
    notes = conn.execute("SELECT COUNT(*) FROM observations WHERE project = ?", (project,)).fetchone()[0]
    counts = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events"
                               " WHERE status IN ('pending', 'claimed', 'failed') GROUP BY status").fetchall())
    return notes, counts.get("pending", 0) + counts.get("claimed", 0), counts.get("failed", 0)
