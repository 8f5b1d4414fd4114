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


def write_group(conn: Store, rows: Sequence[tuple[str, PortableRow]]) -> list[str]:
    """Write (kind, columns) rows — kind `session`, `prompt`, `observation` or `summary` — in ONE
    transaction; returns what happened to each: ADDED, PRESENT (its uid, or the same row under
    another uid, is stored already) or NO_SESSION (it names a session neither in `rows` nor stored).

    A session whose uid or Claude Code id is stored already is that session: its rows join it. A dry
    run uses `Plan.classify` instead, which writes nothing.
    """
    outcomes: list[str] = []
    with transaction(conn):
        local: dict[str, int] = {}
        for kind, row in rows:
            outcomes.append(_write(conn, kind, row, local))
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


class Plan:
    """A dry run that writes nothing, not even to roll it back: what `write_group` would do to each row,
    decided by reads (the same matches the inserts make: uid, the table's own unique key, a manual note's
    project and hash) and by what this run would have added so far. Read speed, any store (read-only)."""

    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}  # uid or "cs:" + Claude Code id of a session it would add -> its uid
        self.keys: set[tuple[object, ...]] = set()  # the unique keys of the rows it would add

    def classify(self, conn: Store, rows: Sequence[tuple[str, PortableRow]]) -> list[str]:
        local: dict[str, int | str] = {}
        return [self._one(conn, kind, row, local) for kind, row in rows]

    def _session(self, conn: Store, uid: str, content_session_id: str | None) -> int | str | None:
        found = _stored_session(conn, uid, content_session_id)
        if found is not None:
            return found
        return self.sessions.get(uid) or (self.sessions.get("cs:" + content_session_id) if content_session_id else None)

    def _one(self, conn: Store, kind: str, row: PortableRow, local: dict[str, int | str]) -> str:
        if kind == "session":
            found = self._session(conn, row["uid"], row["content_session_id"])
            if found is not None:
                local[row["uid"]] = found
                return PRESENT
            self.sessions[row["uid"]] = row["uid"]
            if row["content_session_id"]:
                self.sessions["cs:" + row["content_session_id"]] = row["uid"]
            local[row["uid"]] = row["uid"]
            return ADDED
        session_uid = row.get("session_uid")
        session: int | str | None = None
        if session_uid is not None:
            session = local.get(session_uid)
            if session is None:
                session = self._session(conn, session_uid, None)
                if session is None:
                    return NO_SESSION
                local[session_uid] = session
        table = TABLES[kind]
        keys: list[tuple[object, ...]] = [(table, "uid", row["uid"])]
        if kind == "prompt":
            keys.append((table, session, row["prompt_number"]))
        elif kind == "observation":
            keys.append((table, session, row["content_hash"]) if session is not None
                        else (table, None, row["project"], row["content_hash"]))
        if any(key in self.keys for key in keys) or self._stored(conn, table, keys):
            return PRESENT
        self.keys.update(keys)
        return ADDED

    @staticmethod
    def _stored(conn: Store, table: str, keys: list[tuple[object, ...]]) -> bool:
        if conn.execute(f"SELECT 1 FROM {table} WHERE uid = ?", (keys[0][2],)).fetchone():
            return True
        for key in keys[1:]:
            if isinstance(key[1], str):  # a session this run would add: nothing stored can belong to it
                continue
            if len(key) == 4:
                sql = "SELECT 1 FROM observations WHERE session_id IS NULL AND project = ? AND content_hash = ?"
                if conn.execute(sql, key[2:]).fetchone():
                    return True
            elif conn.execute(f"SELECT 1 FROM {table} WHERE session_id = ? AND "
                              f"{'prompt_number' if table == 'prompts' else 'content_hash'} = ?", key[1:]).fetchone():
                return True
        return False


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
