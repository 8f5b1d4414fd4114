"""What `status` shows about the observer: the provider setting, the queue and the token budget, read-only."""

from __future__ import annotations

import time

from claude_mem import settings as settings_module
from claude_mem import store
from claude_mem.domain import EVENT_STATUSES
from claude_mem.observer import budget
from claude_mem.store import db, queue
from claude_mem.store import spend as ledger


def observer_report(data_dir: str) -> dict[str, object]:
    """Provider, queue counts, the next retry, the most recent failures and the budget (never creates the db)."""
    values = settings_module.load()
    report: dict[str, object] = {
        "provider": values.get("provider"),
        "queue": dict.fromkeys(EVENT_STATUSES, 0),
        "next_retry_at": None,
        "recent_failures": [],
        "budget": None,
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
        if ledger.has_ledger(conn):  # an older store has none until the worker upgrades it
            report["budget"] = budget.report(conn, budget.Limits.from_settings(values), time.time())
    return report
