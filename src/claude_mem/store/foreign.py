"""The original (TypeScript) claude-mem's database, read for `claude-mem import claude-mem`.

Opened read-only (`mode=ro`): nothing here can write to it, whether or not its worker runs. Its
schema is checked before anything is read: the tables and columns an import maps, named when
missing. Rows are streamed one session at a time, with the prompts, observations and summaries that
belong to it, inside one read transaction (a worker writing meanwhile changes nothing we see).

Its schema is theirs, so its column lists are spelled here, not derived from ours. Rows come out as
dicts keyed by the original's column names. Any failure to read it is a `ForeignError` that says
what is wrong in words for someone importing it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any
from urllib.parse import quote

from claude_mem import paths
from claude_mem.domain import RecallError

# How long a read waits for a lock its worker holds (a write in rollback-journal mode blocks readers).
BUSY_MS = 5_000

# What an import reads, by table. Columns the original added later (and may lack) are OPTIONAL.
REQUIRED = {
    "sdk_sessions": ("id", "content_session_id", "memory_session_id", "project", "started_at", "started_at_epoch",
                     "completed_at", "completed_at_epoch", "status"),
    "user_prompts": ("id", "session_db_id", "content_session_id", "prompt_number", "prompt_text", "created_at",
                     "created_at_epoch"),
    "observations": ("id", "memory_session_id", "project", "type", "title", "subtitle", "facts", "narrative",
                     "concepts", "files_read", "files_modified", "prompt_number", "created_at", "created_at_epoch"),
    "session_summaries": ("id", "memory_session_id", "project", "request", "investigated", "learned", "completed",
                          "next_steps", "files_read", "files_edited", "notes", "prompt_number", "created_at",
                          "created_at_epoch"),
}
OPTIONAL = {"sdk_sessions": ("custom_title",), "observations": ("text",)}
# Tables only our own database has: a file holding them is a claude-mem-py store, not the original's.
OURS = ("pending_events", "observation_sources")

TheirRow = dict[str, Any]


class ForeignError(RecallError):
    """The original's database cannot be read: missing, not SQLite, not its schema, or locked."""


def _coerced(column: str, value: object) -> object:
    """A value of theirs as its column means it: SQLite stores any type in any column, so a BLOB where text
    belongs is decoded (bytes that are not UTF-8 replaced), and a project name is always text."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if column == "project" and value is not None and not isinstance(value, str):
        value = str(value)
    return value


def _describe(exc: sqlite3.Error) -> str:
    """What a SQLite error means for someone importing the original's database."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"not a readable SQLite database ({text})"
    if "locked" in text or "busy" in text:
        return (f"locked by another program ({text}): the original claude-mem's worker is writing to it; wait for it"
                " to finish, or stop that worker, and run the import again")
    return f"cannot be read ({text})"


class Original:
    """The original's database, open read-only with its schema checked (`open_readonly`)."""

    def __init__(self, conn: sqlite3.Connection, path: str, optional: dict[str, tuple[str, ...]]) -> None:
        self._conn = conn
        self.path = path
        self._optional = optional  # the OPTIONAL columns it has, by table

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Original:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise ForeignError(f"{self.path}: {_describe(exc)}") from None

    def _rows(self, sql: str, args: Sequence[object] = ()) -> Iterator[TheirRow]:
        with self._reading():
            cursor = self._conn.execute(sql, args)
            names = [column[0] for column in cursor.description]
            for values in cursor:
                yield {name: _coerced(name, value) for name, value in zip(names, values)}

    def _select(self, table: str, alias: str) -> str:
        present = self._optional.get(table, ())
        names = [f"{alias}.{name}" for name in REQUIRED[table]]
        names += [f"{alias}.{name}" if name in present else f"NULL AS {name}" for name in OPTIONAL.get(table, ())]
        return ", ".join(names)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read everything inside one read transaction: what its worker writes meanwhile is not seen."""
        with self._reading():
            self._conn.execute("BEGIN")
        try:
            yield
        finally:
            with self._reading():
                if self._conn.in_transaction:
                    self._conn.execute("COMMIT")

    def counts(self) -> dict[str, int]:
        """Rows of each table an import reads."""
        with self._reading():
            return {table: int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]) for table in REQUIRED}

    def project_names(self) -> list[str]:
        """Every project name (the folder's basename) its sessions, observations and summaries use, sorted."""
        return sorted({row["project"] or "" for row in self._rows(
            "SELECT project FROM sdk_sessions UNION SELECT project FROM observations"
            " UNION SELECT project FROM session_summaries")})

    def sessions(self) -> Iterator[TheirRow]:
        """Its sessions, oldest row first."""
        return self._rows(f"SELECT {self._select('sdk_sessions', 's')} FROM sdk_sessions s ORDER BY s.id")

    def prompts_of(self, session: TheirRow) -> list[TheirRow]:
        """The session's prompts: those naming its row, or (with no row named) its Claude Code id."""
        columns = self._select("user_prompts", "p")
        return list(self._rows(
            f"SELECT {columns} FROM user_prompts p WHERE p.session_db_id = ?"
            f" UNION ALL SELECT {columns} FROM user_prompts p"
            " WHERE p.session_db_id IS NULL AND p.content_session_id = ? ORDER BY 4, 1",
            (session["id"], session["content_session_id"])))

    def observations_of(self, session: TheirRow) -> list[TheirRow]:
        """The session's observations (by its observer's id), oldest row first."""
        return self._by_observer("observations", session)

    def summaries_of(self, session: TheirRow) -> list[TheirRow]:
        """The session's summaries (by its observer's id), oldest row first."""
        return self._by_observer("session_summaries", session)

    def _by_observer(self, table: str, session: TheirRow) -> list[TheirRow]:
        if session["memory_session_id"] is None:
            return []
        return list(self._rows(f"SELECT {self._select(table, 't')} FROM {table} t WHERE t.memory_session_id = ?"
                               " ORDER BY t.id", (session["memory_session_id"],)))

    def orphans(self) -> dict[str, int]:
        """Rows that belong to no session of it (an import cannot place them): table -> count."""
        queries = {
            "user_prompts": "SELECT COUNT(*) FROM user_prompts p WHERE CASE WHEN p.session_db_id IS NULL"
                            " THEN NOT EXISTS (SELECT 1 FROM sdk_sessions s WHERE s.content_session_id = p.content_session_id)"
                            " ELSE NOT EXISTS (SELECT 1 FROM sdk_sessions s WHERE s.id = p.session_db_id) END",
            **{table: f"SELECT COUNT(*) FROM {table} r WHERE NOT EXISTS"
                      " (SELECT 1 FROM sdk_sessions s WHERE s.memory_session_id = r.memory_session_id)"
               for table in ("observations", "session_summaries")},
        }
        with self._reading():
            return {table: int(self._conn.execute(sql).fetchone()[0]) for table, sql in queries.items()}


def open_readonly(path: str, busy_ms: int | None = None) -> Original:
    """The original's database at `path`, opened read-only, its schema checked.

    ForeignError, with one line that says what is wrong, when it cannot be read as the original's.
    """
    busy_ms = BUSY_MS if busy_ms is None else busy_ms
    if not os.path.exists(path):
        raise ForeignError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ForeignError(f"{path}: a directory, not a database file")
    kind = paths.not_regular(os.stat(path).st_mode)
    if kind is not None:  # SQLite would wait on a FIFO forever
        raise ForeignError(f"{path}: not a regular file ({kind}); refused, it is no database")
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=busy_ms / 1000,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ForeignError(f"{path}: cannot be opened ({exc})") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        optional = _check_schema(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise ForeignError(f"{path}: {_describe(exc)}") from None
    except ForeignError:
        conn.close()
        raise
    return Original(conn, path, optional)


def _check_schema(conn: sqlite3.Connection, path: str) -> dict[str, tuple[str, ...]]:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if all(name in tables for name in OURS):
        raise ForeignError(f"{path}: this is a claude-mem-py database, not the original claude-mem's; to move memory "
                           "between two of ours use `claude-mem export` and `claude-mem import jsonl`")
    missing: list[str] = []
    optional: dict[str, tuple[str, ...]] = {}
    for table, needed in REQUIRED.items():
        if table not in tables:
            missing.append(f"table {table}")
            continue
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        missing += [f"{table}.{name}" for name in needed if name not in columns]
        optional[table] = tuple(name for name in OPTIONAL.get(table, ()) if name in columns)
    if missing:
        raise ForeignError(f"{path}: not the original claude-mem's database (missing {', '.join(missing)}); nothing "
                           "imported")
    return optional
