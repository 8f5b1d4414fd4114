"""Storing a batch's results exactly once (DESIGN §2).

Observations, the summary, the `observation_sources` links, the session's finalisation and the
`done` status of the batch's events commit in ONE transaction, and only while the batch's lease is
still ours. A batch redone after a crash therefore stores its results once, however differently the
observer words its second answer; the per-session content hash also blocks identical duplicates.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from dataclasses import dataclass, field

from claude_mem.observer.parser import ParsedObservation, ParsedReply
from claude_mem.observer.provider import Reply
from claude_mem.observer.queue import Batch, iso
from claude_mem.store import db

log = logging.getLogger("claude_mem.observer")

OBSERVATION_COLUMNS = (
    "id", "session_id", "project", "type", "title", "subtitle", "narrative", "facts", "concepts",
    "files_read", "files_modified", "prompt_number", "input_tokens", "output_tokens", "created_at",
)
SUMMARY_COLUMNS = (
    "id", "session_id", "project", "event_id", "prompt_number", "request", "investigated", "learned",
    "completed", "next_steps", "files_read", "files_edited", "notes", "created_at",
)


@dataclass
class Stored:
    """What one committed batch produced (for the event bus)."""

    observations: list[dict[str, object]] = field(default_factory=list)
    summaries: list[dict[str, object]] = field(default_factory=list)
    session_completed: bool = False


def content_hash(obs: ParsedObservation) -> str:
    key = json.dumps([obs.type, obs.title.lower(), obs.narrative.lower(), list(obs.facts)], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _row(conn: sqlite3.Connection, table: str, columns: tuple[str, ...], row_id: int) -> dict[str, object]:
    values = conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE id = ?", (row_id,)).fetchone()
    row = dict(zip(columns, values))
    for name in ("facts", "concepts", "files_read", "files_modified", "files_edited"):
        if isinstance(row.get(name), str):
            row[name] = json.loads(row[name])
    return row


def _prompt_number(batch: Batch) -> int | None:
    numbers = [e.prompt_number for e in batch.events if e.prompt_number is not None]
    if numbers:
        return numbers[0]
    for event in batch.events:
        number = event.payload.get("prompt_number")
        if isinstance(number, int):
            return number
    return None


def store_batch(conn: sqlite3.Connection, batch: Batch, parsed: ParsedReply, reply: Reply,
                provider: str = "") -> Stored | None:
    """Commit the batch's results and mark its events done; None if the lease was lost meanwhile."""
    stored = Stored()
    now = iso()
    marks = ",".join("?" * len(batch.events))
    prompt_number = _prompt_number(batch)
    with db.transaction(conn):
        ours = conn.execute(
            f"SELECT COUNT(*) FROM pending_events WHERE id IN ({marks}) AND status = 'claimed' AND lease_until = ?",
            [*batch.ids, batch.lease],
        ).fetchone()[0]
        if ours != len(batch.events):  # nothing written yet: leaving the block writes nothing
            log.warning("batch %s of session %s lost its lease; results discarded", batch.ids, batch.content_session_id)
            return None
        for obs in parsed.observations:
            digest = content_hash(obs)
            cursor = conn.execute(
                "INSERT OR IGNORE INTO observations (session_id, project, type, title, subtitle, narrative, facts,"
                " concepts, files_read, files_modified, prompt_number, content_hash, input_tokens, output_tokens,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (batch.session_id, batch.project, obs.type, obs.title, obs.subtitle or None, obs.narrative,
                 json.dumps(list(obs.facts)), json.dumps(list(obs.concepts)), json.dumps(list(obs.files_read)),
                 json.dumps(list(obs.files_modified)), prompt_number, digest, reply.input_tokens,
                 reply.output_tokens, now),
            )
            if cursor.rowcount:
                observation_id = cursor.lastrowid
                stored.observations.append({"_id": observation_id})
            else:
                observation_id = conn.execute(
                    "SELECT id FROM observations WHERE session_id = ? AND content_hash = ?",
                    (batch.session_id, digest),
                ).fetchone()[0]
            conn.executemany(
                "INSERT OR IGNORE INTO observation_sources (observation_id, event_id) VALUES (?, ?)",
                [(observation_id, event_id) for event_id in batch.ids],
            )
        summarize = next((e for e in batch.events if e.kind == "summarize"), None)
        if summarize is not None and parsed.summary is not None:
            s = parsed.summary
            cursor = conn.execute(
                "INSERT OR IGNORE INTO summaries (session_id, project, event_id, prompt_number, request,"
                " investigated, learned, completed, next_steps, files_read, files_edited, notes, input_tokens,"
                " output_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (batch.session_id, batch.project, summarize.id, prompt_number, s.request, s.investigated,
                 s.learned, s.completed, s.next_steps, json.dumps(list(s.files_read)),
                 json.dumps(list(s.files_edited)), s.notes, reply.input_tokens, reply.output_tokens, now),
            )
            if cursor.rowcount:
                stored.summaries.append({"_id": cursor.lastrowid})
                _title_from_first_summary(conn, batch.session_id)
        if provider:
            conn.execute("UPDATE sessions SET observer_provider = ? WHERE id = ?", (provider, batch.session_id))
        ended = next((e for e in batch.events if e.kind == "session_end"), None)
        if ended is not None:
            _title_from_first_summary(conn, batch.session_id)
            conn.execute(
                "UPDATE sessions SET status = 'completed', ended_at = ? WHERE id = ?",
                (ended.created_at or now, batch.session_id),
            )
            stored.session_completed = True
        else:
            conn.execute("UPDATE sessions SET status = 'active' WHERE id = ? AND status = 'interrupted'",
                         (batch.session_id,))
        conn.execute(
            f"UPDATE pending_events SET status = 'done', processed_at = ?, lease_until = NULL, last_error = NULL,"
            f" next_attempt_at = NULL WHERE id IN ({marks})", [now, *batch.ids],
        )
        stored.observations = [_row(conn, "observations", OBSERVATION_COLUMNS, int(o["_id"]))
                               for o in stored.observations]
        stored.summaries = [_row(conn, "summaries", SUMMARY_COLUMNS, int(s["_id"])) for s in stored.summaries]
    return stored


def _title_from_first_summary(conn: sqlite3.Connection, session_id: int) -> None:
    conn.execute(
        "UPDATE sessions SET title = (SELECT request FROM summaries WHERE session_id = ? AND request != ''"
        " AND request != '(not captured)' ORDER BY id LIMIT 1) WHERE id = ? AND (title IS NULL OR title = '')",
        (session_id, session_id),
    )


def mark_idle_sessions(conn: sqlite3.Connection, idle_hours: float, now: float | None = None) -> list[str]:
    """Active sessions silent for `idle_hours` become `interrupted`; returns their content ids."""
    cutoff = iso((time.time() if now is None else now) - idle_hours * 3600)
    with db.transaction(conn):
        ids = [row[0] for row in conn.execute(
            "SELECT content_session_id FROM sessions WHERE status = 'active' AND last_activity_at < ?", (cutoff,))]
        conn.execute("UPDATE sessions SET status = 'interrupted' WHERE status = 'active' AND last_activity_at < ?",
                     (cutoff,))
    return ids


def recap(conn: sqlite3.Connection, session_id: int, limit_chars: int = 3000) -> str:
    """What is stored for a session, for re-opening its observer conversation after a restart."""
    lines = [f"- [{kind}] {title}" for kind, title in conn.execute(
        "SELECT type, title FROM observations WHERE session_id = ? ORDER BY id DESC LIMIT 40", (session_id,))]
    lines.reverse()
    latest = conn.execute(
        "SELECT request, completed FROM summaries WHERE session_id = ? ORDER BY id DESC LIMIT 1", (session_id,),
    ).fetchone()
    if latest:
        lines.append(f"Latest turn summary: asked {latest[0]!r}; completed: {latest[1]}")
    text = "\n".join(lines)
    return text[-limit_chars:]
