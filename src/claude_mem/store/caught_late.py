"""Secrets caught late: the worker's second redaction pass over captured rows, and its record.

The hooks redact with the rules of their day (an older plugin, a rule added since). Before a batch
reaches the observer the worker cleans its events once more, and the prompts the observer reads; a
row that this changes is rewritten, so the secret is no longer stored, and counted. So is an
observation or summary the observer echoed a secret into (`results.store_batch`). The counter
`secrets_caught_late` (table `counters`) only grows; `late_catches` keeps the latest few: when,
which row, of what kind — never its text.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from claude_mem import privacy
from claude_mem.domain import iso
from claude_mem.store.models import Batch, PendingEvent
from claude_mem.store.transaction import transaction

log = logging.getLogger("claude_mem.store")

KEPT = 20  # latest catches kept


@dataclass(frozen=True)
class Catch:
    """One row the second pass changed: `row` is event, prompt, observation or summary."""

    row: str
    row_id: int | None
    detail: str = ""  # the event's kind and tool, a prompt's number, an observation's type


def record(conn: sqlite3.Connection, catches: Sequence[Catch]) -> None:
    """Count `catches` and keep them among the latest (inside the caller's transaction)."""
    if not catches:
        return
    conn.execute("INSERT INTO counters (name, value) VALUES ('secrets_caught_late', ?)"
                 " ON CONFLICT (name) DO UPDATE SET value = value + excluded.value", (len(catches),))
    now = iso()
    conn.executemany("INSERT INTO late_catches (caught_at, row_kind, row_id, detail) VALUES (?, ?, ?, ?)",
                     [(now, c.row, c.row_id, c.detail[:80]) for c in catches])
    conn.execute("DELETE FROM late_catches WHERE id <= (SELECT MAX(id) FROM late_catches) - ?", (KEPT,))


def _detail(event: PendingEvent) -> str:
    tool = event.payload.get("tool_name")
    return f"{event.kind} {tool}" if isinstance(tool, str) and tool else event.kind


def _prompts_read(conn: sqlite3.Connection, batch: Batch) -> list[tuple[int, int, str]]:
    """(id, number, text) of the public prompts the observer may read for `batch`: the session's
    first (the conversation's opening), the batch's turns, and the latest (a turn without a number)."""
    first, latest = conn.execute("SELECT MIN(prompt_number), MAX(prompt_number) FROM prompts"
                                 " WHERE session_id = ? AND private = 0", (batch.session_id,)).fetchone()
    numbers = {event.prompt_number for event in batch.events}
    wanted = sorted(n for n in {*numbers, first, latest if None in numbers else None} if n is not None)
    if not wanted:
        return []
    marks = ", ".join("?" for _ in wanted)
    rows = conn.execute(f"SELECT id, prompt_number, text FROM prompts WHERE session_id = ? AND private = 0"
                        f" AND prompt_number IN ({marks})", (batch.session_id, *wanted)).fetchall()
    return [(int(row_id), int(number), str(text)) for row_id, number, text in rows]


def clean_batch(conn: sqlite3.Connection, batch: Batch) -> Batch:
    """`batch` with every event payload through `privacy.clean_tree` once more; an event, or a prompt
    the observer reads, that this changes is rewritten in the store and counted as caught late."""
    events: list[PendingEvent] = []
    catches: list[Catch] = []
    event_rows: list[tuple[str, int]] = []
    for event in batch.events:
        payload = privacy.clean_tree(event.payload)
        if payload != event.payload and isinstance(payload, dict):
            event = dataclasses.replace(event, payload=payload)
            event_rows.append((json.dumps(payload, ensure_ascii=False), event.id))
            catches.append(Catch("event", event.id, _detail(event)))
        events.append(event)
    prompt_rows: list[tuple[str, int]] = []
    for row_id, number, text in _prompts_read(conn, batch):
        cleaned = privacy.clean(text)
        if cleaned != text:
            prompt_rows.append((cleaned, row_id))
            catches.append(Catch("prompt", row_id, f"prompt {number}"))
    if not catches:
        return batch
    with transaction(conn):
        conn.executemany("UPDATE pending_events SET payload = ? WHERE id = ?", event_rows)
        # A prompt already pushed to the team server goes again, cleaned; its vector is made anew.
        conn.executemany("UPDATE prompts SET text = ?, team_rev = CASE WHEN device IS NULL THEN NULL"
                         " ELSE team_rev END WHERE id = ?", prompt_rows)
        conn.executemany("DELETE FROM vectors WHERE kind = 2 AND row_id = ?", [(i,) for _, i in prompt_rows])
        record(conn, catches)
    if prompt_rows:  # the full-text index keeps a deleted term in its segments until they merge
        conn.execute("INSERT INTO prompts_fts (prompts_fts) VALUES ('optimize')")
    log.warning("the second redaction pass caught what the hooks missed in %s of session %s; the stored rows"
                " are redacted now", ", ".join(f"{c.row} {c.row_id}" for c in catches), batch.content_session_id)
    return dataclasses.replace(batch, events=tuple(events))


def nothing_caught() -> dict[str, object]:
    """The report of a store where nothing was caught late (or that does not exist yet)."""
    return {"secrets_caught_late": 0, "latest": []}


def report(conn: sqlite3.Connection) -> dict[str, object]:
    """{secrets_caught_late, latest: [{at, row, id, detail}, …] newest first}; nothing on a database
    whose schema predates the count."""
    found = nothing_caught()
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'late_catches'").fetchone() is None:
        return found
    row = conn.execute("SELECT value FROM counters WHERE name = 'secrets_caught_late'").fetchone()
    found["secrets_caught_late"] = int(row[0]) if row else 0
    found["latest"] = [{"at": at, "row": kind, "id": row_id, "detail": detail} for at, kind, row_id, detail in
                       conn.execute("SELECT caught_at, row_kind, row_id, detail FROM late_catches ORDER BY id DESC")]
    return found
