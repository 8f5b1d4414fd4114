"""What `status` shows about the observer: the provider setting and the queue, read-only."""

from __future__ import annotations

from claude_mem import settings as settings_module
from claude_mem.store import db, stats


def observer_report(data_dir: str) -> dict[str, object]:
    """Provider, queue counts, the next retry and the most recent failures (never creates the db)."""
    values = settings_module.load()
    report: dict[str, object] = {
        "provider": values.get("provider"),
        "queue": dict.fromkeys(stats.EVENT_STATUSES, 0),
        "next_retry_at": None,
        "recent_failures": [],
    }
    conn = db.connect_readonly(db.db_path(data_dir))
    if conn is None:
        return report
    try:
        if db.schema_version(conn) < 1:
            return report
        report["queue"] = stats.queue_counts(conn)
        report["next_retry_at"] = conn.execute(
            "SELECT MIN(next_attempt_at) FROM pending_events WHERE status = 'pending' AND next_attempt_at IS NOT NULL"
        ).fetchone()[0]
        report["recent_failures"] = [
            {"id": row[0], "kind": row[1], "attempts": row[2], "last_error": row[3]}
            for row in conn.execute(
                "SELECT id, kind, attempts, last_error FROM pending_events WHERE status = 'failed'"
                " ORDER BY processed_at DESC, id DESC LIMIT 3")
        ]
    finally:
        conn.close()
    return report
