"""The observer's results, stored exactly once (DESIGN §2), and what the observer reads about a session.

Observations, the summary, the `observation_sources` links, the session's finalisation and the
final status of the batch's events (`done`, or `failed` for an event the observer could not
answer) commit in ONE transaction, and only while the batch's lease is still ours. A batch redone
after a crash therefore stores its results once, however differently the observer words its second
answer; the per-session content hash also blocks identical duplicates.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from claude_mem import privacy
from claude_mem.domain import iso
from claude_mem.store import caught_late, fingerprints, rows
from claude_mem.store import spend as ledger
from claude_mem.store.context import OBSERVATION_WEIGHTS
from claude_mem.store.models import Batch, ParsedObservation, ParsedSummary, Related
from claude_mem.store.transaction import transaction

log = logging.getLogger("claude_mem.store")
T = TypeVar("T", ParsedObservation, ParsedSummary)

@dataclass
class Stored:
    """What one committed batch produced: the ids of its new rows, and whether it ended the session."""

    observations: list[int] = field(default_factory=list)
    summaries: list[int] = field(default_factory=list)
    session_completed: bool = False


def content_hash(obs: ParsedObservation) -> str:
    key = json.dumps([obs.type, obs.title.lower(), obs.narrative.lower(), list(obs.facts)], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _prompt_number(batch: Batch) -> int | None:
    numbers = [e.prompt_number for e in batch.events if e.prompt_number is not None]
    if numbers:
        return numbers[0]
    for event in batch.events:
        number = event.payload.get("prompt_number")
        if isinstance(number, int):
            return number
    return None


def event_time(batch: Batch, now: str) -> str:
    """When the batch's events happened: the latest of their times (a transcript line's own for an
    import, the hook's for live capture), never later than `now`; `now` when none is known."""
    times = [event.created_at for event in batch.events if event.created_at]
    return min(max(times), now) if times else now


def store_batch(
    conn: sqlite3.Connection, batch: Batch, observations: Sequence[ParsedObservation],
    summary: ParsedSummary | None, *, input_tokens: int = 0, output_tokens: int = 0, provider: str = "",
    failed: Mapping[int, str] | None = None, spend: ledger.Spend | None = None,
) -> Stored | None:
    """Commit the batch's results and finish its events; None if the lease was lost meanwhile.

    Events named in `failed` (id -> error) end `failed` with that error instead of `done`. `spend`
    (what the batch cost) goes into the observer's ledger in the same transaction, even when the
    lease was lost: the tokens were spent all the same.
    """
    failed = dict(failed or {})
    # Defence in depth: the hooks redacted what the observer read, but its reply is cleaned again
    # before any of it reaches a derived table (a secret split past a cut, a rule added since capture);
    # what this changes is counted as a secret caught late.
    cleaned = [_cleaned(obs) for obs in observations]
    echoed = [after != before for after, before in zip(cleaned, observations)]
    cleaned_summary = _cleaned(summary) if summary is not None else None
    summary_echoed = cleaned_summary != summary
    observations, summary = cleaned, cleaned_summary
    catches: list[caught_late.Catch] = []
    stored = Stored()
    observation_ids: list[int] = []
    summary_ids: list[int] = []
    now = iso()
    happened = event_time(batch, now)  # results are dated by their events; `processed_at` says when stored
    marks = ",".join("?" * len(batch.events))
    prompt_number = _prompt_number(batch)
    batch_files = _batch_files(batch)
    with transaction(conn):
        if spend is not None:
            ledger.add(conn, batch.session_id, spend)
        ours = conn.execute(
            f"SELECT COUNT(*) FROM pending_events WHERE id IN ({marks}) AND status = 'claimed' AND lease_until = ?",
            [*batch.ids, batch.lease],
        ).fetchone()[0]
        if ours != len(batch.events):  # nothing written yet: leaving the block writes nothing
            log.warning("batch %s of session %s lost its lease; results discarded", batch.ids, batch.content_session_id)
            return None
        for obs, caught in zip(observations, echoed):
            digest = content_hash(obs)
            values = {"session_id": batch.session_id, "project": batch.project, **rows.content_values(obs),
                      "prompt_number": prompt_number, "content_hash": digest, "input_tokens": input_tokens,
                      "output_tokens": output_tokens, "created_at": happened, "processed_at": now}
            cursor = conn.execute(rows.insert("observations", values, "INSERT OR IGNORE"), values)
            if cursor.rowcount and cursor.lastrowid is not None:
                observation_id = cursor.lastrowid
                observation_ids.append(observation_id)
            else:
                observation_id = conn.execute(
                    "SELECT id FROM observations WHERE session_id = ? AND content_hash = ?",
                    (batch.session_id, digest),
                ).fetchone()[0]
            if batch_files:
                fingerprints.add(conn, observation_id, _files_of(obs, batch_files))
            if caught:
                catches.append(caught_late.Catch("observation", observation_id, obs.type))
            conn.executemany(
                "INSERT OR IGNORE INTO observation_sources (observation_id, event_id) VALUES (?, ?)",
                [(observation_id, event_id) for event_id in batch.ids],
            )
            if obs.supersedes is not None:
                supersede(conn, observation_id, obs.supersedes)
        summarize = batch.first("summarize")
        if summarize is not None and summary is not None:
            values = {"session_id": batch.session_id, "project": batch.project, "event_id": summarize.id,
                      "prompt_number": prompt_number, **rows.content_values(summary), "input_tokens": input_tokens,
                      "output_tokens": output_tokens, "created_at": happened, "processed_at": now}
            cursor = conn.execute(rows.insert("summaries", values, "INSERT OR IGNORE"), values)
            if cursor.rowcount and cursor.lastrowid is not None:
                summary_ids.append(cursor.lastrowid)
                _title_from_first_summary(conn, batch.session_id)
            if summary_echoed:
                catches.append(caught_late.Catch("summary", summary_ids[-1] if summary_ids else None,
                                                 f"turn {prompt_number}" if prompt_number is not None else ""))
        caught_late.record(conn, catches)
        if provider:
            conn.execute("UPDATE sessions SET observer_provider = ? WHERE id = ?", (provider, batch.session_id))
        ended = batch.first("session_end")
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
        done = [event_id for event_id in batch.ids if event_id not in failed]
        conn.executemany(
            "UPDATE pending_events SET status = 'done', processed_at = ?, lease_until = NULL, last_error = NULL,"
            " next_attempt_at = NULL WHERE id = ?", [(now, event_id) for event_id in done],
        )
        conn.executemany(
            "UPDATE pending_events SET status = 'failed', processed_at = ?, lease_until = NULL, last_error = ?,"
            " next_attempt_at = NULL WHERE id = ?",
            [(now, error[:2000], event_id) for event_id, error in failed.items() if event_id in batch.ids],
        )
        stored.observations, stored.summaries = observation_ids, summary_ids
    return stored


def _batch_files(batch: Batch) -> dict[str, Mapping[str, object]]:
    """path → the batch's latest fingerprint of it (the hooks put them in tool events' `files`)."""
    found: dict[str, Mapping[str, object]] = {}
    for event in batch.events:
        files = event.payload.get("files")
        for item in files if isinstance(files, list) else ():
            if isinstance(item, dict) and isinstance(item.get("path"), str) and item["path"]:
                found.pop(item["path"], None)
                found[item["path"]] = item  # re-inserted: the latest comes last
    return found


def _files_of(obs: ParsedObservation, batch_files: Mapping[str, Mapping[str, object]]) -> list[Mapping[str, object]]:
    """The batch's fingerprints an observation inherits: those of the files it names (absolute or
    relative spellings match by their trailing path components), or all of them when it names none."""
    named = [name.strip().replace("\\", "/").removeprefix("./").rstrip("/")
             for name in (*obs.files_read, *obs.files_modified) if isinstance(name, str) and name.strip()]
    if not named:
        return list(batch_files.values())
    return [item for path, item in batch_files.items()
            if any(name == path or name.endswith("/" + path) or path.endswith("/" + name) for name in named)]


def supersede(conn: sqlite3.Connection, new_id: int, old_id: int) -> bool:
    """Mark `old_id` superseded by `new_id` (issue 26) when it is a valid, older observation of the same
    project that `new_id` does not itself (transitively) supersede; False (nothing written) otherwise.
    Runs inside the caller's transaction."""
    if not 0 < old_id < 2**63 or old_id == new_id:
        return False
    ok = conn.execute(
        "SELECT 1 FROM observations old JOIN observations new ON new.project = old.project"
        " WHERE old.id = ? AND new.id = ? AND old.id < new.id", (old_id, new_id)).fetchone()
    if ok is None:
        return False
    # Never a cycle: walk the successors of `new_id`; reaching `old_id` would close a loop.
    seen, current = {new_id}, new_id
    while (row := conn.execute("SELECT superseded_by FROM observations WHERE id = ?", (current,)).fetchone()) \
            and row[0] is not None and row[0] not in seen:
        if row[0] == old_id:
            return False
        seen.add(current := int(row[0]))
    conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (new_id, old_id))
    return True


def related_observations(conn: sqlite3.Connection, project: str, files: Sequence[str], expression: str = "",
                         limit: int = 5) -> list[Related]:
    """Up to `limit` current (not superseded) observations of `project` related to a batch: those about
    the same `files` first (newest first), then the best BM25 matches of an FTS5 `expression`."""
    found: dict[int, Related] = {}

    def add(cursor: sqlite3.Cursor) -> None:
        for row_id, kind, title, read, modified in cursor:
            if len(found) < limit and row_id not in found:
                paths = tuple(dict.fromkeys(rows.decode_list(modified) + rows.decode_list(read)))[:4]
                found[row_id] = Related(id=int(row_id), type=str(kind), title=str(title), files=paths)

    wanted = [f for f in dict.fromkeys(files) if f][:20]
    if wanted and limit > 0:
        marks = ", ".join("?" * len(wanted))
        add(conn.execute(
            "SELECT o.id, o.type, o.title, o.files_read, o.files_modified FROM observations o"
            " WHERE o.project = ? AND o.superseded_by IS NULL AND"
            f" (EXISTS (SELECT 1 FROM json_each(o.files_modified) WHERE value IN ({marks}))"
            f" OR EXISTS (SELECT 1 FROM json_each(o.files_read) WHERE value IN ({marks})))"
            " ORDER BY o.id DESC LIMIT ?", (project, *wanted, *wanted, limit)))
    if expression and len(found) < limit:
        try:
            add(conn.execute(
                "SELECT o.id, o.type, o.title, o.files_read, o.files_modified FROM observations_fts"
                " JOIN observations o ON o.id = observations_fts.rowid"
                " WHERE observations_fts MATCH ? AND o.project = ? AND o.superseded_by IS NULL"
                f" ORDER BY bm25(observations_fts, {OBSERVATION_WEIGHTS}) LIMIT ?", (expression, project, limit)))
        except sqlite3.DatabaseError as exc:  # an expression FTS5 refuses, or a damaged index: the file
            log.info("related observations: %s", exc)  # matches suffice (storing the batch repairs the index)
    return list(found.values())


def _cleaned(parsed: T) -> T:
    """A parsed observation or summary with every text field (and list item) through `privacy.clean`."""
    changes: dict[str, Any] = {}
    for spec in dataclasses.fields(parsed):
        value = getattr(parsed, spec.name)
        if isinstance(value, str):
            changes[spec.name] = privacy.clean(value)
        elif isinstance(value, tuple):
            changes[spec.name] = tuple(privacy.clean(item) if isinstance(item, str) else item for item in value)
    return dataclasses.replace(parsed, **changes)


def _title_from_first_summary(conn: sqlite3.Connection, session_id: int) -> None:
    conn.execute(
        "UPDATE sessions SET title = (SELECT request FROM summaries WHERE session_id = ? AND request != ''"
        " AND request != '(not captured)' ORDER BY id LIMIT 1) WHERE id = ? AND (title IS NULL OR title = '')",
        (session_id, session_id),
    )


def mark_idle_sessions(conn: sqlite3.Connection, idle_hours: float, now: float | None = None) -> list[str]:
    """Active sessions silent for `idle_hours` become `interrupted`; returns their content ids."""
    cutoff = iso((time.time() if now is None else now) - idle_hours * 3600)
    with transaction(conn):
        ids = [row[0] for row in conn.execute(
            "SELECT content_session_id FROM sessions WHERE status = 'active' AND last_activity_at < ?", (cutoff,))]
        conn.execute("UPDATE sessions SET status = 'interrupted' WHERE status = 'active' AND last_activity_at < ?",
                     (cutoff,))
    return ids


# -- what the observer reads about a session -----------------------------------------------------------


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
    return privacy.clean("\n".join(lines))[-limit_chars:]


def first_request(conn: sqlite3.Connection, session_id: int) -> str | None:
    """The session's first public prompt; None when none is stored."""
    row = conn.execute("SELECT text FROM prompts WHERE session_id = ? AND private = 0 ORDER BY prompt_number"
                       " LIMIT 1", (session_id,)).fetchone()
    return None if row is None else privacy.clean(str(row[0]))


def started_at(conn: sqlite3.Connection, session_id: int) -> str:
    """When the session started ('' when unknown)."""
    row = conn.execute("SELECT started_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return str(row[0] or "") if row else ""


def turn_request(conn: sqlite3.Connection, session_id: int, prompt_number: int | None, limit: int = 2000) -> str:
    """The public prompt of turn `prompt_number` (the latest one when None); '' when none."""
    row = conn.execute(
        "SELECT text FROM prompts WHERE session_id = ? AND private = 0 AND (prompt_number = ? OR ? IS NULL)"
        " ORDER BY prompt_number DESC LIMIT 1", (session_id, prompt_number, prompt_number),
    ).fetchone()
    return privacy.clean(str(row[0]))[:limit] if row else ""
