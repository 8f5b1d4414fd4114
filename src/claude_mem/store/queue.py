"""The event queue: claim a session's next batch with a lease, then release, retry or fail it.

Order is per session: a batch always starts at a session's oldest unfinished event, and a session
with a claimed batch or a head event in backoff is skipped, so events of one session are observed
in order while other sessions proceed. Attempts are counted when a batch is claimed, so a worker
that dies mid-batch still uses up an attempt once its lease expires.

A failed event records why (`failure_class`, m021): `transient` — the worker stopped or its lease ran
out, the provider timed out or failed, the database was locked — or `content`, a reason in the events
themselves. `revive_transient` puts transient failures back with fresh attempts once their wait is
over (`REVIVAL_WAIT_FACTOR` × the backoff base × 4^revivals since they failed), at most `MAX_REVIVALS`
times; the worker calls it at start and every few seconds while it runs. Content failures stay failed,
listed with their reason, until a user retries them.

Also the queue's read side: counts by status, rows for display, the next retry and recent failures.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from typing import Any

from claude_mem.domain import EVENT_STATUSES, iso
from claude_mem.store.models import Batch, PendingEvent
from claude_mem.store.transaction import transaction

ENDS_BATCH = ("summarize", "session_end")
TRANSIENT, CONTENT = "transient", "content"
FAILURE_CLASSES = (TRANSIENT, CONTENT)
MAX_REVIVALS = 4  # rounds of fresh attempts a transient failure gets (an event that kills the worker each time ends)
REVIVAL_WAIT_FACTOR = 30  # × `retry_backoff_seconds` (2 s by default): 1 min, then 4, 16 and 64 min


def _event(row: tuple[Any, ...]) -> PendingEvent:
    event_id, session_id, kind, prompt_number, payload, attempts, created_at = row
    try:
        decoded = json.loads(payload)
    except (TypeError, ValueError):
        decoded = {"unreadable_payload": str(payload)[:2000]}
    return PendingEvent(id=event_id, session_id=session_id, kind=kind, prompt_number=prompt_number,
                        payload=decoded if isinstance(decoded, dict) else {"value": decoded},
                        attempts=attempts, created_at=created_at or "")


def expire_leases(conn: sqlite3.Connection, max_attempts: int, now: float) -> int:
    """Claimed events whose lease ran out go back to the queue (or fail, out of attempts). In a txn."""
    stamp = iso(now)
    failed = conn.execute(
        "UPDATE pending_events SET status = 'failed', lease_until = NULL, processed_at = ?, failure_class = 'transient',"
        " last_error = 'lease expired mid-batch (worker stopped?) after ' || attempts || ' attempt(s)'"
        " WHERE status = 'claimed' AND lease_until < ? AND attempts >= ?", (stamp, stamp, max_attempts),
    ).rowcount
    returned = conn.execute(
        "UPDATE pending_events SET status = 'pending', lease_until = NULL"
        " WHERE status = 'claimed' AND lease_until < ?", (stamp,),
    ).rowcount
    return failed + returned


def claim_batch(
    conn: sqlite3.Connection, *, lease_seconds: float, max_events: int, max_chars: int, max_attempts: int,
    now: float | None = None,
) -> Batch | None:
    """Claim the next eligible session's batch, or None when nothing is due."""
    now = time.time() if now is None else now
    stamp = iso(now)
    with transaction(conn):
        expire_leases(conn, max_attempts, now)
        head = conn.execute(
            "SELECT e.session_id FROM pending_events e WHERE e.status = 'pending'"
            " AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= ?)"
            " AND e.id = (SELECT MIN(id) FROM pending_events h"
            "             WHERE h.session_id = e.session_id AND h.status IN ('pending', 'claimed'))"
            " ORDER BY e.id LIMIT 1", (stamp,),
        ).fetchone()
        if head is None:
            return None  # commits the lease expiry above
        session = conn.execute(
            "SELECT id, content_session_id, project, COALESCE(cwd, '') FROM sessions WHERE id = ?", (head[0],),
        ).fetchone()
        rows = conn.execute(
            "SELECT id, session_id, kind, prompt_number, payload, attempts, created_at FROM pending_events"
            " WHERE session_id = ? AND status = 'pending' ORDER BY id LIMIT ?", (head[0], max(1, max_events)),
        ).fetchall()
        # Each failed attempt of the head event halves the batch, so one event that makes every
        # reply fail takes few neighbours down with it instead of the whole batch.
        limit = max(1, max_events >> min(rows[0][5], 16))
        events: list[PendingEvent] = []
        chars = 0
        for row in rows:
            event = _event(row)
            if events and (chars + event.chars > max_chars or event.kind == "prompt" or len(events) >= limit):
                break  # a new user prompt starts a new turn; size bounds the batch
            events.append(event)
            chars += event.chars
            if event.kind in ENDS_BATCH:
                break
        lease = iso(now + lease_seconds)
        conn.executemany(
            "UPDATE pending_events SET status = 'claimed', lease_until = ?, attempts = attempts + 1 WHERE id = ?",
            [(lease, event.id) for event in events],
        )
    claimed = tuple(dataclasses.replace(event, attempts=event.attempts + 1) for event in events)
    return Batch(session_id=session[0], content_session_id=session[1], project=session[2], cwd=session[3],
                 events=claimed, lease=lease)


def _ours(batch: Batch) -> tuple[str, list[object]]:
    marks = ",".join("?" * len(batch.events))
    return f"id IN ({marks}) AND status = 'claimed' AND lease_until = ?", [*batch.ids, batch.lease]


def fail_batch(
    conn: sqlite3.Connection, batch: Batch, error: str, *, max_attempts: int, backoff_base: float,
    burn: bool = True, delay: float | None = None, final: bool = False, now: float | None = None,
    failure_class: str = TRANSIENT,
) -> dict[str, int]:
    """A failed attempt: back to the queue after a backoff, or `failed` when out of attempts.

    `burn=False` gives the attempt back (rate limits, auth and quota pauses are not the batch's
    fault); `final=True` fails the events at once (an error that retrying cannot fix). Events that
    end `failed` record `failure_class` (`transient` ones come back later: `revive_transient`).
    """
    if failure_class not in FAILURE_CLASSES:
        raise ValueError(f"failure_class must be one of {FAILURE_CLASSES}, not {failure_class!r}")
    now = time.time() if now is None else now
    where, params = _ours(batch)
    error = error[:2000]
    with transaction(conn):
        failed = 0
        if burn:
            failed = conn.execute(
                f"UPDATE pending_events SET status = 'failed', last_error = ?, lease_until = NULL, failure_class = ?,"
                f" next_attempt_at = NULL, processed_at = ? WHERE {where} AND (attempts >= ? OR ?)",
                [error, failure_class, iso(now), *params, max_attempts, int(final)],
            ).rowcount
        rows = conn.execute(f"SELECT id, attempts FROM pending_events WHERE {where}", params).fetchall()
        for event_id, attempts in rows:
            attempts = attempts if burn else max(0, attempts - 1)
            wait = delay if delay is not None else backoff_base * 2 ** max(0, attempts - 1)
            conn.execute(
                "UPDATE pending_events SET status = 'pending', attempts = ?, last_error = ?, lease_until = NULL,"
                " next_attempt_at = ? WHERE id = ?", (attempts, error, iso(now + wait), event_id),
            )
    return {"failed": failed, "requeued": len(rows)}


def release_batch(conn: sqlite3.Connection, batch: Batch) -> int:
    """Give an unfinished batch back untouched (shutdown): pending again, attempt not counted."""
    where, params = _ours(batch)
    with transaction(conn):
        count: int = conn.execute(
            f"UPDATE pending_events SET status = 'pending', lease_until = NULL,"
            f" attempts = MAX(0, attempts - 1) WHERE {where}", params,
        ).rowcount
    return count


def release_stale_claims(conn: sqlite3.Connection, max_attempts: int) -> int:
    """At worker start (single instance): every claim left is from a dead worker. Its attempt counts
    (an event that kills the worker each time must not be retried forever): requeued now, or
    `failed` once it has used `max_attempts`."""
    error = "the worker stopped mid-batch (killed or crashed) during attempt ' || attempts || ' of ' || ? || '"
    with transaction(conn):
        count: int = conn.execute(
            f"UPDATE pending_events SET status = 'failed', lease_until = NULL, processed_at = ?, last_error = '{error}',"
            " failure_class = 'transient' WHERE status = 'claimed' AND attempts >= ?", (iso(), max_attempts, max_attempts),
        ).rowcount
        count += conn.execute(
            f"UPDATE pending_events SET status = 'pending', lease_until = NULL, last_error = '{error}'"
            " WHERE status = 'claimed'", (max_attempts,),
        ).rowcount
    return count


def revive_transient(conn: sqlite3.Connection, *, backoff_base: float, now: float | None = None,
                     max_revivals: int = MAX_REVIVALS) -> int:
    """Put events that failed for a transient reason back in the queue with fresh attempts, once their
    wait since they failed is over; how many. Reads first: a call with nothing due writes nothing."""
    now = time.time() if now is None else now
    wait = max(1.0, backoff_base * REVIVAL_WAIT_FACTOR)
    due_sql = ("status = 'failed' AND failure_class = 'transient' AND revivals < ?"
               " AND julianday(COALESCE(processed_at, created_at)) + (? * (1 << (2 * revivals))) / 86400.0"
               " <= julianday(?)")
    params = (max_revivals, wait, iso(now))
    if conn.execute(f"SELECT 1 FROM pending_events WHERE {due_sql} LIMIT 1", params).fetchone() is None:
        return 0
    with transaction(conn):
        count: int = conn.execute(
            "UPDATE pending_events SET status = 'pending', attempts = 0, revivals = revivals + 1,"
            f" next_attempt_at = NULL, lease_until = NULL, processed_at = NULL, failure_class = NULL WHERE {due_sql}",
            params).rowcount
    return count


def retry(conn: sqlite3.Connection, ids: list[int] | None = None) -> int:
    """Requeue failed events (all, or those in `ids`; a pending one in backoff becomes due now)."""
    with transaction(conn):
        sql = ("UPDATE pending_events SET status = 'pending', attempts = 0, next_attempt_at = NULL,"
               " lease_until = NULL, processed_at = NULL, failure_class = NULL, revivals = 0 WHERE ")
        if ids is None:
            count: int = conn.execute(sql + "status = 'failed'").rowcount
        else:
            count = 0
            for event_id in ids:
                count += conn.execute(sql + "id = ? AND status IN ('failed', 'pending')", (event_id,)).rowcount
    return count


# -- the read side ----------------------------------------------------------------------------------


def queue_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Events per status (every status present, zero when none)."""
    counts = dict.fromkeys(EVENT_STATUSES, 0)
    for status, count in conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status"):
        counts[status] = count
    return counts


def list_events(
    conn: sqlite3.Connection, statuses: tuple[str, ...], limit: int = 100, session: str | None = None,
) -> list[dict[str, object]]:
    """Queue rows for display, oldest first."""
    marks = ",".join("?" * len(statuses))
    params: list[object] = list(statuses)
    sql = (
        "SELECT e.id, s.content_session_id, s.project, e.kind, e.prompt_number, e.status, e.attempts,"
        " e.last_error, e.next_attempt_at, e.lease_until, e.created_at, e.processed_at,"
        " CASE WHEN json_valid(e.payload) THEN json_extract(e.payload, '$.tool_name') END,"
        " CASE WHEN e.status = 'failed' THEN COALESCE(e.failure_class, 'content') END, e.revivals"
        f" FROM pending_events e JOIN sessions s ON s.id = e.session_id WHERE e.status IN ({marks})"
    )
    if session:
        sql += " AND s.content_session_id LIKE ?"
        params.append(session + "%")
    sql += " ORDER BY e.id LIMIT ?"
    params.append(limit)
    names = ("id", "session", "project", "kind", "prompt_number", "status", "attempts", "last_error",
             "next_attempt_at", "lease_until", "created_at", "processed_at", "tool", "failure_class", "revivals")
    return [dict(zip(names, row)) for row in conn.execute(sql, params)]


def next_retry_at(conn: sqlite3.Connection) -> str | None:
    """When the earliest event in backoff becomes due; None when none waits."""
    row = conn.execute(
        "SELECT MIN(next_attempt_at) FROM pending_events WHERE status = 'pending' AND next_attempt_at IS NOT NULL"
    ).fetchone()
    return row[0] if row else None


def recent_failures(conn: sqlite3.Connection, limit: int = 3) -> list[dict[str, object]]:
    """The most recently failed events: id, kind, attempts, last error, failure class and whether the
    worker will retry it by itself (`comes_back`: a transient failure with revivals left)."""
    return [
        {"id": row[0], "kind": row[1], "attempts": row[2], "last_error": row[3], "failure_class": row[4],
         "comes_back": row[4] == TRANSIENT and row[5] < MAX_REVIVALS}
        for row in conn.execute(
            "SELECT id, kind, attempts, last_error, COALESCE(failure_class, 'content'), revivals FROM pending_events"
            " WHERE status = 'failed' ORDER BY processed_at DESC, id DESC LIMIT ?", (limit,))
    ]
