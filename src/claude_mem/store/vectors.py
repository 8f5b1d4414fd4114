"""Embeddings as derived data: the queue of rows that need one, storing them, reading them back.

Since m016 (`vector_schema`) a vector is int8 (a unit vector scaled so that its largest component is
±127), in a rowid table whose `id` only grows; triggers queue every row that needs a vector
(`vector_queue`) and log every observation vector that goes (`vector_removals`), so that a process
holding the vectors in memory follows with two range reads: vectors above the last id it read, removals
above the last seq. The model that made them is named once (`vector_model`): vectors are read only for
that model, and storing vectors of another model first drops the old ones and queues their rows.
The float32 vectors of m003 wait in `vectors_f32` until the worker converts them (`legacy`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from claude_mem.store.search import SearchFilters, observation_filters
from claude_mem.store.transaction import transaction

KINDS = ("observation", "summary", "prompt")  # the order the backfill serves them in
# What is embedded of each kind: the text a reader would recognise it by.
_TEXTS = {
    "observation": ("observations", "title || char(10) || coalesce(subtitle, '') || char(10) || narrative"),
    "summary": ("summaries", "request || char(10) || learned || char(10) || completed"),
    "prompt": ("prompts", "text"),
}
# The newest removals kept after a trim: a reader that fell further behind reloads everything.
KEEP_REMOVALS = 1000

Row = tuple[str, int, str]  # (kind, row id, text to embed)
Stored = tuple[str, int, bytes]  # (kind, row id, int8 vector)
CODES = {"observation": 0, "summary": 1, "prompt": 2}  # `vectors.kind`
KIND_OF = {code: kind for kind, code in CODES.items()}


def _texts(conn: sqlite3.Connection, kind: str, ids: list[int]) -> dict[int, str]:
    table, text = _TEXTS[kind]
    private = " AND t.private = 0" if kind == "prompt" else ""
    marks = ",".join("?" * len(ids))
    return {row_id: value or "" for row_id, value in conn.execute(
        f"SELECT t.id, {text} FROM {table} t WHERE t.id IN ({marks}){private}", ids)}


def queued(conn: sqlite3.Connection, limit: int) -> list[Row]:
    """Up to `limit` queued rows, observations first, each kind newest first: (kind, id, text). A queued
    row that is gone or private leaves the queue here."""
    found: list[Row] = []
    for kind in KINDS:
        if len(found) >= limit:
            break
        ids = [row[0] for row in conn.execute(
            "SELECT row_id FROM vector_queue WHERE kind = ? ORDER BY row_id DESC LIMIT ?", (kind, limit - len(found)))]
        if not ids:
            continue
        texts = _texts(conn, kind, ids)
        if len(texts) < len(ids):
            dequeue(conn, [(kind, row_id) for row_id in ids if row_id not in texts])
        found += [(kind, row_id, texts[row_id]) for row_id in ids if row_id in texts]
    return found


def queued_observations(conn: sqlite3.Connection, filters: SearchFilters, limit: int) -> list[Row]:
    """Up to `limit` queued observations that pass `filters`, newest first: what a search by meaning
    embeds on demand before it ranks."""
    where, args = observation_filters(filters)
    return [("observation", row_id, value or "") for row_id, value in conn.execute(
        f"SELECT o.id, {_TEXTS['observation'][1]} FROM vector_queue q"
        " JOIN observations o ON o.id = q.row_id WHERE q.kind = 'observation'"
        + "".join(f" AND {clause}" for clause in where) + " ORDER BY q.row_id DESC LIMIT ?", (*args, limit))]


def queued_count(conn: sqlite3.Connection, filters: SearchFilters | None = None, cap: int = 100_000) -> int:
    """How many rows wait for a vector (observations passing `filters` when given), counted up to `cap`."""
    if filters is None:
        return int(conn.execute("SELECT COUNT(*) FROM (SELECT 1 FROM vector_queue LIMIT ?)", (cap,)).fetchone()[0])
    where, args = observation_filters(filters)
    return int(conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM vector_queue q JOIN observations o ON o.id = q.row_id"
        " WHERE q.kind = 'observation'" + "".join(f" AND {clause}" for clause in where) + " LIMIT ?)",
        (*args, cap)).fetchone()[0])


def dequeue(conn: sqlite3.Connection, keys: Iterable[tuple[str, int]]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM vector_queue WHERE kind = ? AND row_id = ?", list(keys))


def model(conn: sqlite3.Connection) -> str | None:
    """The model the stored vectors are of (None before the first is stored)."""
    found = conn.execute("SELECT model FROM vector_model WHERE id = 1").fetchone()
    return found[0] if found else None


def save(conn: sqlite3.Connection, model_name: str, rows: list[Stored]) -> None:
    """Store int8 vectors of `model_name` (replacing any older one of the row) and take their rows off the
    queue. A row deleted meanwhile gets none."""
    with transaction(conn):
        reset_model(conn, model_name)
        for kind, row_id, vector in rows:
            table = _TEXTS[kind][0]
            private = " AND private = 0" if kind == "prompt" else ""
            conn.execute(f"INSERT OR REPLACE INTO vectors (kind, row_id, vector)"
                         f" SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM {table} WHERE id = ?{private})",
                         (CODES[kind], row_id, vector, row_id))
        conn.executemany("DELETE FROM vector_queue WHERE kind = ? AND row_id = ?",
                         [(kind, row_id) for kind, row_id, _vector in rows])


def progress(conn: sqlite3.Connection) -> dict[str, int]:
    """{embedded, queued, total}: rows with a vector, rows waiting for one, and their sum."""
    embedded = int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
    waiting = int(conn.execute("SELECT COUNT(*) FROM vector_queue").fetchone()[0]) + legacy_count(conn)
    return {"embedded": embedded, "queued": waiting, "total": embedded + waiting}


def any_vector(conn: sqlite3.Connection, model_name: str) -> bool:
    """True when some row has a vector of `model_name` (stops at the first), or float32 vectors of m003
    wait for conversion (search by meaning is what the user had)."""
    return (model(conn) == model_name and bool(conn.execute("SELECT EXISTS (SELECT 1 FROM vectors)").fetchone()[0])) \
        or legacy_count(conn, cap=1) > 0


def generation(conn: sqlite3.Connection) -> int:
    """A number that changes whenever an observation vector is added or removed (migrations m005, m016)."""
    return int(conn.execute("SELECT generation FROM vector_generation WHERE id = 1").fetchone()[0])


def database_file(conn: sqlite3.Connection) -> str:
    """The main database's file ("" in memory): with `generation`, what identifies cached vectors."""
    return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Reads inside see one state of the database (a read transaction, unless one is already open)."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        yield
    finally:
        if own:
            conn.execute("COMMIT")


def marks(conn: sqlite3.Connection) -> tuple[int, int]:
    """(the highest vector id, the highest removal seq): where a reader that loads everything now starts."""
    return (int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM vectors").fetchone()[0]),
            int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_removals").fetchone()[0]))


def observation_vectors(conn: sqlite3.Connection, model_name: str, after: int, limit: int
                        ) -> list[tuple[int, int, str, bytes]]:
    """(vector id, observation id, project, int8 vector) of observation vectors of `model_name` with an id
    above `after`, by id, at most `limit`."""
    if model(conn) != model_name:
        return []
    return conn.execute(
        "SELECT v.id, v.row_id, o.project, v.vector FROM vectors v JOIN observations o ON o.id = v.row_id"
        " WHERE v.id > ? AND v.kind = 0 ORDER BY v.id LIMIT ?", (after, limit)).fetchall()


def observation_vector_count(conn: sqlite3.Connection, model_name: str) -> int:
    """How many observations have a vector of `model_name`."""
    if model(conn) != model_name:
        return 0
    return int(conn.execute("SELECT COUNT(*) FROM vectors WHERE kind = 0").fetchone()[0])


def observation_vectors_of(conn: sqlite3.Connection, model_name: str, row_ids: list[int]) -> list[tuple[int, bytes]]:
    """(observation id, int8 vector) of each of these observations that has a vector of `model_name`."""
    if model(conn) != model_name:
        return []
    found: list[tuple[int, bytes]] = []
    for start in range(0, len(row_ids), 500):
        chunk = row_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        found += conn.execute(f"SELECT row_id, vector FROM vectors WHERE kind = 0 AND row_id IN ({marks})",
                              chunk).fetchall()
    return found


def removals(conn: sqlite3.Connection, after: int) -> list[tuple[int, int]] | None:
    """(seq, observation id) of the observation vectors removed after `after`, in order; None when the
    log no longer reaches back that far (trimmed): the reader must reload everything."""
    oldest = conn.execute("SELECT MIN(seq) FROM vector_removals").fetchone()[0]
    if oldest is not None and oldest > after + 1:
        return None
    return conn.execute("SELECT seq, row_id FROM vector_removals WHERE seq > ? ORDER BY seq", (after,)).fetchall()


def trim_removals(conn: sqlite3.Connection) -> None:
    """Keep the newest `KEEP_REMOVALS` entries of the removal log."""
    with transaction(conn):
        conn.execute("DELETE FROM vector_removals WHERE seq <= (SELECT MAX(seq) FROM vector_removals) - ?",
                     (KEEP_REMOVALS,))


def reset_model(conn: sqlite3.Connection, model_name: str) -> int:
    """Make `model_name` the vectors' model: when another one made them, every vector goes and its row is
    queued again. Returns how many went."""
    if model(conn) == model_name:
        return 0
    with transaction(conn):
        stale = conn.execute("SELECT kind, row_id FROM vectors").fetchall()
        conn.execute("DELETE FROM vectors")
        conn.executemany("INSERT OR IGNORE INTO vector_queue (kind, row_id) VALUES (?, ?)",
                         [(KIND_OF[code], row_id) for code, row_id in stale])
        conn.execute("INSERT INTO vector_model (id, model) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET model = ?",
                     (model_name, model_name))
    return len(stale)


def legacy_count(conn: sqlite3.Connection, cap: int = 10_000_000) -> int:
    """How many float32 vectors of m003 wait for conversion (0 once converted)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors_f32'").fetchone():
        return 0
    return int(conn.execute("SELECT COUNT(*) FROM (SELECT 1 FROM vectors_f32 LIMIT ?)", (cap,)).fetchone()[0])


def legacy(conn: sqlite3.Connection, limit: int) -> list[tuple[str, int, str, bytes]]:
    """Up to `limit` float32 vectors of m003 still to convert: (kind, row id, model, float32 vector)."""
    if not legacy_count(conn, cap=1):
        return []
    return conn.execute("SELECT kind, row_id, model, vector FROM vectors_f32 LIMIT ?", (limit,)).fetchall()


def converted(conn: sqlite3.Connection, model_name: str, rows: list[Stored], requeue: list[tuple[str, int]]) -> None:
    """Store converted legacy vectors, queue the rows whose legacy vector was of another model, drop those
    legacy rows, and the legacy table once it is empty."""
    with transaction(conn):
        save(conn, model_name, rows)
        keys = [(kind, row_id) for kind, row_id, _vector in rows] + requeue
        conn.executemany("INSERT OR IGNORE INTO vector_queue (kind, row_id) VALUES (?, ?)", requeue)
        conn.executemany("DELETE FROM vectors_f32 WHERE kind = ? AND row_id = ?", keys)
        if not conn.execute("SELECT EXISTS (SELECT 1 FROM vectors_f32)").fetchone()[0]:
            for table in ("observations", "summaries", "prompts"):
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_vector_f32_delete")
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_vector_f32_update")
            conn.execute("DROP TABLE vectors_f32")


def reclaim(conn: sqlite3.Connection) -> None:
    """Give the pages the float32 vectors of m003 held back to the file system (~0.5 GB at 100k rows): once,
    when the last is converted. VACUUM takes the write lock for seconds; hooks wait or spool meanwhile."""
    conn.execute("VACUUM")


def filtered_observation_ids(conn: sqlite3.Connection, filters: SearchFilters) -> list[int]:
    """The ids of every observation that passes `filters`."""
    where, args = observation_filters(filters)
    return [row[0] for row in conn.execute(
        "SELECT o.id FROM observations o" + (" WHERE " + " AND ".join(where) if where else ""), args)]
