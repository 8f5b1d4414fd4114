"""What `status` shows about the observer: the provider setting and the queue, read-only."""

from __future__ import annotations

from claude_mem import settings as settings_module
from claude_mem import store
from claude_mem.domain import EVENT_STATUSES
from claude_mem.store import db, queue


def observer_report(data_dir: str) -> dict[str, object]:
    """Provider, queue counts, the next retry and the most recent failures (never creates the db)."""
    values = settings_module.load()
    report: dict[str, object] = {
        "provider": values.get("provider"),
        "queue": dict.fromkeys(EVENT_STATUSES, 0),
        "next_retry_at": None,
        "recent_failures": [],
    }
    try:
        conn = store.open(data_dir, readonly=True)
    except store.NoDatabase:
        return report
    with conn:
        if db.schema_version(conn) < 1:
            return report
        report["queue"] = queue.queue_counts(conn)
        report["next_retry_at"] = queue.next_retry_at(conn)
        report["recent_failures"] = queue.recent_failures(conn, 3)
    return report
