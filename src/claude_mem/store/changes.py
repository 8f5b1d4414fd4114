"""The change log (migration m010): what was added, changed or deleted in memory, whoever wrote it.

Triggers fill `changes` on every insert, delete and content update of an observation, summary or
prompt and on every deleted session, so each writer — a hook, the CLI, an importer, the worker, team
replication — moves it without knowing. The worker's change feed reads it: `data_version` tells, with
no read of the file, whether another connection committed since the last look; `newest` is the mark
to read after; `after` turns the next entries into the rows to announce, in the shape the stream
carries them, and the ids of what was deleted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from claude_mem.store import rows as typed
from claude_mem.store.memory import Record, row_dict
from claude_mem.store.rows import ObservationRow, SummaryRow

# Bookkeeping a viewer card never shows.
_UNSHOWN = ("uid", "content_hash", "fetch_count", "device", "team_rev")
# The stream's row of each kind (`kind` and `ref` first, then the columns a viewer card shows).
_ROWS = {
    "observation": (
        f"SELECT 'observation' AS kind, '#' || o.id AS ref, {typed.select(typed.columns_except(ObservationRow, _UNSHOWN), 'o')},"
        " s.content_session_id AS content_session_id"
        " FROM observations o LEFT JOIN sessions s ON s.id = o.session_id WHERE o.id IN ({marks})"
    ),
    "summary": (
        f"SELECT 'summary' AS kind, 'S' || m.id AS ref, {typed.select(typed.columns_except(SummaryRow, _UNSHOWN), 'm')},"
        " s.content_session_id AS content_session_id"
        " FROM summaries m JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({marks})"
    ),
    # Private prompts are never announced.
    "prompt": (
        "SELECT 'prompt' AS kind, 'P' || p.id AS ref, p.id, p.session_id, p.prompt_number, p.text, p.created_at,"
        " s.project AS project, s.content_session_id AS content_session_id, p.author"
        " FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE p.id IN ({marks}) AND p.private = 0"
    ),
}
_REMOVED = {"observation": "observations", "summary": "summaries", "prompt": "prompts"}


@dataclass(frozen=True)
class Changes:
    """What the log holds after a mark: `rows` ((kind, row) of each row added or changed, in the order
    of its first entry, `row["op"]` 'insert' or 'update'; rows gone since are left out) and `removed`
    (`{observations, summaries, prompts}` by row id, `sessions` by Claude Code id); `last` is the mark
    to read after next time."""

    last: int
    rows: list[tuple[str, Record]] = field(default_factory=list)
    removed: dict[str, list[int | str]] = field(default_factory=dict)

    @property
    def forgot(self) -> bool:
        return any(self.removed.values())


def data_version(conn: sqlite3.Connection) -> int:
    """A number that moves when another connection commits (SQLite's `PRAGMA data_version`)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def newest(conn: sqlite3.Connection) -> int:
    """The sequence number of the newest entry (0 when the log is empty)."""
    return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()[0])


def after(conn: sqlite3.Connection, last: int, limit: int) -> Changes:
    """At most `limit` entries after `last`, as rows to announce and ids that are gone."""
    entries = conn.execute(
        "SELECT seq, kind, op, row_id, session FROM changes WHERE seq > ? ORDER BY seq LIMIT ?", (last, limit)
    ).fetchall()
    if not entries:
        return Changes(last)
    wanted: dict[tuple[str, int], str] = {}
    removed: dict[str, list[int | str]] = {"observations": [], "summaries": [], "prompts": [], "sessions": []}
    for _, kind, op, row_id, session in entries:
        if op == "delete":
            removed["sessions" if kind == "session" else _REMOVED[kind]].append(session if kind == "session" else row_id)
        else:
            wanted.setdefault((kind, row_id), op)  # an insert then an update in one read is one new row
    found: dict[tuple[str, int], Record] = {}
    for kind in _ROWS:
        found.update(((kind, row["id"]), row) for row in _rows(conn, kind, [i for k, i in wanted if k == kind]))
    rows = [(kind, {**found[(kind, row_id)], "op": op}) for (kind, row_id), op in wanted.items()
            if (kind, row_id) in found]
    for name in ("observations", "summaries", "prompts"):
        removed[name].sort(key=int)
    return Changes(int(entries[-1][0]), rows, removed)


def _rows(conn: sqlite3.Connection, kind: str, ids: Iterable[int]) -> list[Record]:
    wanted = list(ids)
    if not wanted:
        return []
    cursor = conn.execute(_ROWS[kind].format(marks=", ".join("?" for _ in wanted)), wanted)
    return [row_dict(cursor, row) for row in cursor.fetchall()]
