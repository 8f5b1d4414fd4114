"""Storing pulled team rows in bulk (issue 32 items 4–6): a joining machine takes a project's whole
history in large batches, each one transaction that also moves the project's cursor, so search and
context use what has arrived while the rest streams, and a pull cut off anywhere resumes from its last
committed batch with nothing stored twice.

Each batch is checked before it is stored: a row over `MAX_ROW_BYTES` (a server set up before it
had a size CHECK), a row that is not what its kind holds (payload not an object, a field of the wrong
type, an unknown kind) is skipped and counted; fields this version does not know (a newer client's)
are left out and counted; every text is cut to `max_field_chars`, as local captures are. Rows are
written with one `executemany` per kind (the vector-queue, change-feed and project triggers run as
for any write; a large group of observations or summaries has its full-text work done in three set
statements instead of its insert trigger: `_indexed_after`); a group that fails goes row by row, a
row that still fails is skipped. A batch that
deletes rows is followed by a WAL checkpoint, so a forgotten text leaves this machine's `-wal` as
soon as on the machine where it was forgotten.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from claude_mem.capture.payload import _cut as cut
from claude_mem.store import context_field, context_schema, rows, team_server
from claude_mem.store import team as local
from claude_mem.store.rows import ObservationRow, SummaryRow
from claude_mem.store.transaction import transaction

# A pulled row's payload above this many bytes (as JSON) is skipped: the team server refuses larger
# ones (its CHECK on octet_length), a server set up before that check may still hold some.
MAX_ROW_BYTES = team_server.ROW_LIMIT  # the server's own CHECK (older servers have none)

_TEXT, _NUMBER, _LIST = (str, type(None)), (int, type(None)), (list,)
_SESSION_OF = {"session_uid": _TEXT, "content_session_id": _TEXT, "session_started_at": _TEXT}


def _typed(row_type: type, kind: str) -> dict[str, tuple[type, ...]]:
    """The payload fields of an observation or summary and the JSON types each may hold."""
    hints = rows.type_hints(row_type)
    found: dict[str, tuple[type, ...]] = {}
    for name in local.TRAVELS[kind]:
        if name in ("uid", "project"):
            continue
        hint = hints[name]
        options = get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        found[name] = _LIST if list[str] in options else _NUMBER if int in options else _TEXT
    return found


# A group of observations or summaries this large has its full-text work done once for the group.
BULK_INDEX_ROWS = 200
# The statements of the insert trigger `_indexed_after` stands in for (their first four words).
_TRIGGER_STEPS = {table: ["INSERT OR REPLACE INTO", f"INSERT INTO {table}_fts (rowid,", "INSERT OR IGNORE INTO", "END"]
                  for table in ("observations", "summaries")}

# What a pulled payload may hold, per kind, and the types of each field (None: absent or JSON null).
FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "session": {"content_session_id": _TEXT, "title": _TEXT, "status": _TEXT, "started_at": _TEXT,
                "ended_at": _TEXT, "last_activity_at": _TEXT},
    "prompt": {**_SESSION_OF, "prompt_number": _NUMBER, "text": _TEXT, "created_at": _TEXT},
    "observation": {**_SESSION_OF, **_typed(ObservationRow, "observation")},
    "summary": {**_SESSION_OF, **_typed(SummaryRow, "summary")},
}


@dataclass
class Applied:
    """What one batch did, and why rows were left out (`notes`: one line per kind of problem)."""

    stored: int = 0
    deleted: int = 0
    oversize: int = 0
    malformed: int = 0
    newer: int = 0  # rows stored without fields this version does not know
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 10:
            self.notes.append(text)


def prepare(streamed: Sequence[Sequence[Any]], max_chars: int, max_bytes: int = MAX_ROW_BYTES,
            applied: Applied | None = None) -> tuple[list[local.TeamRow], Applied]:
    """Rows as the server streams them (uid, kind, project, author, device, payload text, deleted,
    rev) made into rows `apply` stores; the ones it cannot store are counted in the `Applied`."""
    applied = applied or Applied()
    good: list[local.TeamRow] = []
    for item in streamed:
        try:
            uid, kind, project, author, device, text, deleted, rev = item
        except (TypeError, ValueError):
            applied.malformed += 1
            applied.note("skipped a row of an unknown shape")
            continue
        where = f"skipped row {uid} (revision {rev})"
        if kind not in FIELDS:
            applied.malformed += 1
            applied.note(f"{where}: unknown kind {str(kind)[:40]!r}")
            continue
        if deleted:
            good.append({"uid": uid, "kind": kind, "project": project, "author": author, "device": device,
                         "payload": {}, "deleted": True, "rev": int(rev)})
            continue
        if not isinstance(text, str):
            applied.malformed += 1
            applied.note(f"{where}: no payload")
            continue
        if len(text) > max_bytes or (len(text) * 4 > max_bytes and len(text.encode("utf-8", "replace")) > max_bytes):
            applied.oversize += 1
            applied.note(f"{where}: {len(text.encode('utf-8', 'replace'))} bytes, over the {max_bytes}-byte limit")
            continue
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            applied.malformed += 1
            applied.note(f"{where}: its payload is not a JSON object")
            continue
        fields = FIELDS[kind]
        unknown = [name for name in payload if name not in fields]
        if unknown:
            applied.newer += 1
            applied.note(f"{kind} rows carry fields this version does not know ({', '.join(sorted(unknown)[:5])}):"
                         " stored without them; upgrade claude-mem to keep them")
            payload = {name: value for name, value in payload.items() if name in fields}
        wrong = _check_and_cut(payload, fields, max_chars)
        if wrong:
            applied.malformed += 1
            applied.note(f"{where}: wrong type in {', '.join(sorted(wrong)[:5])}")
            continue
        good.append({"uid": uid, "kind": kind, "project": project, "author": author, "device": device,
                     "payload": payload, "deleted": False, "rev": int(rev)})
    return good, applied


def _check_and_cut(payload: dict[str, Any], fields: dict[str, tuple[type, ...]], max_chars: int) -> list[str]:
    """The fields of `payload` whose value is not of their type; texts (and list items) over
    `max_chars` cut in place, head and tail kept."""
    wrong = []
    for name, value in payload.items():
        if value.__class__ is str:
            if len(value) > max_chars:
                payload[name] = cut(value, max_chars)
            if str in fields[name]:
                continue
        elif value.__class__ is list:
            if list in fields[name] and all(item.__class__ is str for item in value):
                if any(len(item) > max_chars for item in value):
                    payload[name] = [cut(item, max_chars) for item in value]
                continue
        elif value is None or (value.__class__ is int and int in fields[name]):
            continue
        wrong.append(name)
    return wrong


def apply(conn: sqlite3.Connection, pulled: Sequence[local.TeamRow], project: str, cursor: tuple[str, int],
          saved: dict[str, str], applied: Applied | None = None) -> Applied:
    """Store prepared rows of one team project (local key `project`) in one transaction that also moves
    its cursor (key, revision) and adds what was skipped to the counters in team_state (`saved`: the
    state as read, updated here); checkpoint after deletions."""
    applied = applied or Applied()
    with transaction(conn):
        waiting: set[str] | None = None
        start = 0
        while start < len(pulled):
            end = start
            deleting = pulled[start]["deleted"]
            while end < len(pulled) and pulled[end]["deleted"] == deleting:
                end += 1
            run = pulled[start:end]
            if deleting:
                if waiting is None:
                    waiting = {uid for (uid,) in conn.execute("SELECT uid FROM team_tombstones")}
                for kind in local.KINDS:
                    uids = [(row["uid"],) for row in run if row["kind"] == kind]
                    if uids:
                        applied.deleted += conn.executemany(f"DELETE FROM {local.TABLES[kind]} WHERE uid = ?",
                                                            uids).rowcount
            else:
                applied.stored += _store_run(conn, run, project, applied)
            start = end
        if waiting is not None:
            # What these deletions took with them (a session's rows cascade) is deleted on the server too.
            made = [(uid,) for (uid,) in conn.execute("SELECT uid FROM team_tombstones") if uid not in waiting]
            conn.executemany("DELETE FROM team_tombstones WHERE uid = ?", made)
        state: dict[str, object] = {cursor[0]: cursor[1]}
        for key, count in (("skipped_oversize", applied.oversize), ("skipped_malformed", applied.malformed),
                           ("newer_fields", applied.newer)):
            if count:
                state[key] = int(saved.get(key, "0")) + count
        if applied.notes:
            state["last_skip"] = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {applied.notes[0]}"
        local.set_state(conn, state)
    saved.update({key: str(value) for key, value in state.items()})
    if waiting is not None:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return applied


def _store_run(conn: sqlite3.Connection, run: Sequence[local.TeamRow], project: str, applied: Applied) -> int:
    """Upsert rows that are not deletions: sessions, then what hangs off them, one statement a kind."""
    stored = 0
    by_kind: dict[str, list[local.TeamRow]] = {kind: [] for kind in local.KINDS}
    for row in run:
        by_kind[row["kind"]].append(row)
    stored += _many(conn, applied, by_kind["session"], project, local.SESSION_UPSERT,
                    [local.session_values(row, project) for row in by_kind["session"]])
    if not any(by_kind[kind] for kind in ("prompt", "observation", "summary")):
        return stored
    sessions = _session_ids(conn, [row for kind in ("prompt", "observation", "summary") for row in by_kind[kind]],
                            project)
    prompts = [row for row in by_kind["prompt"] if sessions.get(row["payload"].get("session_uid"))]
    stored += _many(conn, applied, prompts, project, local.PROMPT_UPSERT,
                    [local.prompt_values(row, sessions[row["payload"]["session_uid"]]) for row in prompts])
    stored += len(by_kind["prompt"]) - len(prompts)  # a prompt without its session: nothing to hold it
    for kind, table, row_type in (("observation", "observations", ObservationRow),
                                  ("summary", "summaries", SummaryRow)):
        wanted = [row for row in by_kind[kind] if kind == "observation" or sessions.get(row["payload"].get("session_uid"))]
        stored += len(by_kind[kind]) - len(wanted)
        if not wanted:
            continue
        values = [local.pulled_values(row, row_type, project, sessions.get(row["payload"].get("session_uid") or ""))
                  for row in wanted]
        sql = rows.insert(table, values[0]) + local.UPSERT_TAIL[table]
        if len(wanted) >= BULK_INDEX_ROWS and _indexed_after(conn, table, sql, values):
            stored += len(wanted)
        else:
            stored += _many(conn, applied, wanted, project, sql, values)
    return stored


def _indexed_after(conn: sqlite3.Connection, table: str, sql: str, values: Sequence[dict[str, object]]) -> bool:
    """Insert many rows of `table` with its full-text work done once for all of them instead of row by row:
    its insert trigger (own context, FTS row, neighbours queued: store/context_schema.py) is dropped for
    the statement and its three steps run as three set statements, then the trigger is made again — all
    inside the caller's transaction, so no other connection ever sees the table without it. False
    (nothing done) when the trigger is not the one these steps stand for (a later migration changed
    it) or a row fails: the caller then takes the ordinary path."""
    trigger = f"{table}_fts_insert"
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    steps = [" ".join(part.split()[:4]) for part in str(found[0] if found else "").split(" BEGIN", 1)[-1].split(";")]
    if steps != _TRIGGER_STEPS[table]:
        return False
    kind = {name: number for number, name in context_field.TABLES.items()}[table]
    columns = ", ".join(context_field.INDEXED[table])
    after = context_schema._TABLES[table][3][1]  # how many rows before a new one hold it in their context
    try:
        with transaction(conn):
            newest = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
            conn.execute(f"DROP TRIGGER {trigger}")
            conn.executemany(sql, values)
            conn.execute(f"INSERT OR REPLACE INTO search_context (kind, row_id, text) SELECT ?, v.id, v.text"
                         f" FROM {table}_context v WHERE v.id > ?", (kind, newest))
            conn.execute(f"INSERT INTO {table}_fts (rowid, {columns}) SELECT id, {columns} FROM {table}_search"
                         f" WHERE id > ? ORDER BY id", (newest,))
            conn.execute(
                f"INSERT OR IGNORE INTO context_queue (kind, row_id) SELECT ?, id FROM (SELECT n.id, row_number()"
                f" OVER (PARTITION BY n.session_id ORDER BY n.id DESC) AS k FROM {table} n WHERE n.id <= ?"
                f" AND n.session_id IN (SELECT session_id FROM {table} WHERE id > ?)) WHERE k <= ?",
                (kind, newest, newest, after))
            conn.execute(str(found[0]))
        return True
    except (sqlite3.IntegrityError, sqlite3.InterfaceError, TypeError, ValueError, KeyError):
        return False


def _many(conn: sqlite3.Connection, applied: Applied, group: Sequence[local.TeamRow], project: str, sql: str,
          made: Sequence[Any]) -> int:
    """Upsert `group` (its statement's parameters: `made`) with one executemany; if any row fails, the
    group goes row by row and a row that still fails (a teammate's newer or damaged data) is skipped.
    Returns the rows stored."""
    if not group:
        return 0
    try:
        with transaction(conn):
            conn.executemany(sql, made)
        return len(group)
    except (sqlite3.IntegrityError, sqlite3.InterfaceError, TypeError, ValueError, KeyError):
        one_by_one = local.apply_pulled(conn, group, {row["project"]: project for row in group})
        if one_by_one["skipped"]:
            applied.malformed += one_by_one["skipped"]
            applied.note(f"skipped {one_by_one['skipped']} {group[0]['kind']} row(s) this store cannot hold"
                         " (a required field missing, a value out of range)")
        return int(one_by_one["stored"])


def _session_ids(conn: sqlite3.Connection, group: Sequence[local.TeamRow], project: str) -> dict[str, int]:
    """Session uid → local id for every session the rows of `group` belong to; a session not here yet
    gets a placeholder row (its own row comes later and fills it in)."""
    wanted: dict[str, local.TeamRow] = {}
    for row in group:
        uid = row["payload"].get("session_uid")
        if uid and uid not in wanted:
            wanted[uid] = row
    found: dict[str, int] = {}
    uids = list(wanted)
    for chunk in range(0, len(uids), 500):
        part = uids[chunk:chunk + 500]
        found.update(conn.execute(f"SELECT uid, id FROM sessions WHERE uid IN ({', '.join('?' * len(part))})",
                                  part).fetchall())
    missing = [uid for uid in uids if uid not in found]
    for uid in missing:
        session_id = local.placeholder_session(conn, wanted[uid], project)
        if session_id is not None:
            found[uid] = session_id
    return found


def data_dir(conn: sqlite3.Connection) -> str | None:
    """The directory of the store's database file (its data dir); None for an in-memory store."""
    for _, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            return os.path.dirname(str(path))
    return None
