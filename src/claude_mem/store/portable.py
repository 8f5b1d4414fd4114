"""The portable repository: memory read out for export and written back by an import, by global id.

Export reads inside one snapshot: every stream is ordered by its session (`started_at`, `uid`) and
then by a key that does not depend on local row ids, so two copies of the same memory stream the
same rows in the same order, and the streams can be merged one session at a time in constant
memory. An import (our JSONL export, the original claude-mem's database) writes one session and its
rows per transaction, and matches rows by their `uid` (m006) so that importing twice adds nothing.

What travels is every column of the typed rows (`store/rows.py`) but the ones that mean something
only in this database (`LOCAL`). Rows come and go as dicts keyed by column name, JSON lists decoded;
children name their session by `session_uid` (None for a manual note).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from claude_mem.store.db import Store
from claude_mem.store.rows import (
    JSON_LISTS,
    OBSERVATION_COLUMNS,
    PROMPT_COLUMNS,
    SESSION_COLUMNS,
    SUMMARY_COLUMNS,
    TEAM_COLUMNS,
    decode,
    encode_list,
    select,
)
from claude_mem.store.transaction import transaction

# Columns that never leave this database: local integer ids (elsewhere a row is its `uid`, and a child
# names its session by `session_uid`) and the team's bookkeeping of who shared it.
LOCAL = ("id", "session_id", "event_id", "superseded_by", *TEAM_COLUMNS)

PortableRow = dict[str, Any]


def exported(columns: Sequence[str]) -> tuple[str, ...]:
    """The columns of a table that an export carries and an import writes, in table order."""
    return tuple(name for name in columns if name not in LOCAL)


# Per record kind: its table and the columns that travel.
TABLES = {"session": "sessions", "prompt": "prompts", "observation": "observations", "summary": "summaries"}
COLUMNS = {"session": exported(SESSION_COLUMNS), "prompt": exported(PROMPT_COLUMNS),
           "observation": exported(OBSERVATION_COLUMNS), "summary": exported(SUMMARY_COLUMNS)}

# What an import did with each row.
ADDED, PRESENT, NO_SESSION = "added", "present", "no session"


class Scope:
    """Which sessions and rows an export takes: one project (None: all) and rows stored at or after
    `since` (None: all), with every session one of them belongs to or that was active since then."""

    def __init__(self, project: str | None, since: str | None) -> None:
        self.project = project
        self.since = since

    def sessions(self, alias: str) -> tuple[str, list[object]]:
        """The WHERE clause (and its arguments) selecting the scope's sessions as `alias`."""
        where = f"(? IS NULL OR {alias}.project = ?)"
        args: list[object] = [self.project, self.project]
        if self.since is not None:
            where += (f" AND ({alias}.last_activity_at >= ? OR {alias}.started_at >= ?"
                      f" OR {alias}.id IN (SELECT session_id FROM prompts WHERE created_at >= ?)"
                      f" OR {alias}.id IN (SELECT session_id FROM observations WHERE created_at >= ?)"
                      f" OR {alias}.id IN (SELECT session_id FROM summaries WHERE created_at >= ?))")
            args += [self.since] * 5
        return where, args

    def rows(self, alias: str, session_alias: str) -> tuple[str, list[object]]:
        """The WHERE clause selecting the scope's rows (`alias`) of the scope's sessions (`session_alias`)."""
        return (f"(? IS NULL OR {session_alias}.project = ?) AND (? IS NULL OR {alias}.created_at >= ?)",
                [self.project, self.project, self.since, self.since])

    def notes(self) -> tuple[str, list[object]]:
        """The WHERE clause selecting the scope's manual notes (observations of no session) as `o`."""
        return ("o.session_id IS NULL AND (? IS NULL OR o.project = ?) AND (? IS NULL OR o.created_at >= ?)",
                [self.project, self.project, self.since, self.since])


@contextmanager
def snapshot(conn: Store) -> Iterator[None]:
    """Read everything inside one read transaction: counts and rows agree whatever is written meanwhile."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _rows(conn: Store, sql: str, args: Sequence[object]) -> Iterator[PortableRow]:
    cursor = conn.execute(sql, args)
    names = [column[0] for column in cursor.description]
    for values in cursor:
        yield decode(dict(zip(names, values)))


def counts(conn: Store, scope: Scope) -> tuple[dict[str, int], str | None]:
    """({sessions, prompts, observations, summaries}: rows in scope, the newest timestamp among them)."""
    where, args = scope.sessions("s")
    found: dict[str, int] = {}
    newest: list[str] = []
    count, latest = conn.execute(f"SELECT COUNT(*), MAX(s.last_activity_at) FROM sessions s WHERE {where}",
                                 args).fetchone()
    found["sessions"] = count
    newest += [latest] if latest else []
    for table, alias in (("prompts", "p"), ("observations", "o"), ("summaries", "m")):
        rows, rows_args = scope.rows(alias, "s")
        count, latest = conn.execute(
            f"SELECT COUNT(*), MAX({alias}.created_at) FROM {table} {alias} JOIN sessions s ON s.id = {alias}.session_id"
            f" WHERE {rows}", rows_args).fetchone()
        found[table] = count
        newest += [latest] if latest else []
    notes, notes_args = scope.notes()
    count, latest = conn.execute(f"SELECT COUNT(*), MAX(o.created_at) FROM observations o WHERE {notes}",
                                 notes_args).fetchone()
    found["observations"] += count
    newest += [latest] if latest else []
    return found, max(newest, default=None)


def sessions(conn: Store, scope: Scope) -> Iterator[PortableRow]:
    """The scope's sessions in export order."""
    where, args = scope.sessions("s")
    return _rows(conn, f"SELECT {select(COLUMNS['session'], 's')} FROM sessions s WHERE {where}"
                       " ORDER BY s.started_at, s.uid", args)


def _children(conn: Store, scope: Scope, kind: str, alias: str, order: str) -> Iterator[PortableRow]:
    where, args = scope.rows(alias, "s")
    return _rows(conn, f"SELECT s.uid AS session_uid, {select(COLUMNS[kind], alias)} FROM {TABLES[kind]} {alias}"
                       f" JOIN sessions s ON s.id = {alias}.session_id WHERE {where}"
                       f" ORDER BY s.started_at, s.uid, {order}", args)


def prompts(conn: Store, scope: Scope) -> Iterator[PortableRow]:
    """The scope's prompts (private ones too: they mark a private turn), by session, then number."""
    return _children(conn, scope, "prompt", "p", "p.prompt_number, p.uid")


def observations(conn: Store, scope: Scope) -> Iterator[PortableRow]:
    """The scope's observations of a session, by session, then time."""
    return _children(conn, scope, "observation", "o", "o.created_at, o.uid")


def summaries(conn: Store, scope: Scope) -> Iterator[PortableRow]:
    """The scope's summaries, by session, then time."""
    return _children(conn, scope, "summary", "m", "m.created_at, m.uid")


def notes(conn: Store, scope: Scope) -> Iterator[PortableRow]:
    """The scope's manual notes (observations of no session), by time."""
    where, args = scope.notes()
    return _rows(conn, f"SELECT NULL AS session_uid, {select(COLUMNS['observation'], 'o')} FROM observations o"
                       f" WHERE {where} ORDER BY o.created_at, o.uid", args)


# -- import -------------------------------------------------------------------------------------------


class _DryRun(Exception):
    """Raised to roll a dry run's writes back."""


def write_group(conn: Store, rows: Sequence[tuple[str, PortableRow]], dry_run: bool = False) -> list[str]:
    """Write (kind, columns) rows — kind `session`, `prompt`, `observation` or `summary` — in ONE
    transaction; returns what happened to each: ADDED, PRESENT (its uid, or the same row under
    another uid, is stored already) or NO_SESSION (it names a session neither in `rows` nor stored).

    A session whose uid or Claude Code id is stored already is that session: its rows join it. With
    `dry_run` everything is written, counted and rolled back.
    """
    outcomes: list[str] = []
    try:
        with transaction(conn):
            local: dict[str, int] = {}
            for kind, row in rows:
                outcomes.append(_write(conn, kind, row, local))
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return outcomes


def _write(conn: Store, kind: str, row: PortableRow, local: dict[str, int]) -> str:
    if kind == "session":
        found = _stored_session(conn, row["uid"], row["content_session_id"])
        if found is not None:
            local[row["uid"]] = found
            return PRESENT
        local[row["uid"]] = _insert(conn, kind, row)
        return ADDED
    session_uid = row.get("session_uid")
    session_id = None
    if session_uid is not None:
        session_id = local.get(session_uid)
        if session_id is None:
            session_id = _stored_session(conn, session_uid, None)
            if session_id is None:
                return NO_SESSION
            local[session_uid] = session_id
    values = {name: value for name, value in row.items() if name != "session_uid"}
    values["session_id"] = session_id
    if kind == "observation" and session_id is None and conn.execute(
            "SELECT 1 FROM observations WHERE session_id IS NULL AND project = ? AND content_hash = ?",
            (values["project"], values["content_hash"])).fetchone():
        return PRESENT  # the same manual note, remembered here too
    return ADDED if _insert(conn, kind, values, ignore=True) else PRESENT


def _stored_session(conn: Store, uid: str, content_session_id: str | None) -> int | None:
    row = conn.execute("SELECT id FROM sessions WHERE uid = ? OR content_session_id = ? ORDER BY uid = ? DESC"
                       " LIMIT 1", (uid, content_session_id, uid)).fetchone()
    return int(row[0]) if row else None


def _insert(conn: Store, kind: str, values: PortableRow, ignore: bool = False) -> int:
    """Insert one row (JSON list columns encoded); its new id, or 0 when `ignore` and a unique key
    (uid, or the table's own) matched. Any other constraint still fails loudly."""
    names = list(values)
    writable = {*COLUMNS[kind], *(("session_id",) if kind != "session" else ())}
    unknown = set(names) - writable
    if unknown:
        raise ValueError(f"not a column of {TABLES[kind]} that an import writes: {', '.join(sorted(unknown))}")
    encoded = [encode_list(values[name]) if name in JSON_LISTS else values[name] for name in names]
    cursor = conn.execute(
        f"INSERT INTO {TABLES[kind]} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
        + (" ON CONFLICT DO NOTHING" if ignore else ""), encoded)
    return int(cursor.lastrowid or 0) if cursor.rowcount else 0
