"""Embeddings as derived data: which rows still need one, storing them, and reading them back.

Vectors are float32 BLOBs (little-endian, L2-normalised) keyed by (kind, row id) and tagged with the
model that made them; a row whose vector came from another model counts as missing, so changing the
model re-embeds everything. Deleting a row deletes its vector (triggers, migration m003).
"""

from __future__ import annotations

import sqlite3

from claude_mem.store.search import SearchFilters, observation_filters
from claude_mem.store.transaction import transaction

# What is embedded of each kind: the text a reader would recognise it by.
_TEXTS = {
    "observation": ("observations", "title || char(10) || coalesce(subtitle, '') || char(10) || narrative"),
    "summary": ("summaries", "request || char(10) || learned || char(10) || completed"),
    "prompt": ("prompts", "text"),
}


def missing(conn: sqlite3.Connection, model: str, limit: int) -> list[tuple[str, int, str]]:
    """Up to `limit` rows without a vector of `model`: (kind, id, text), newest first."""
    found: list[tuple[str, int, str]] = []
    for kind, (table, text) in _TEXTS.items():
        if len(found) >= limit:
            break
        privacy_filter = " AND t.private = 0" if kind == "prompt" else ""
        found += [(kind, row_id, value or "") for row_id, value in conn.execute(
            f"SELECT t.id, {text} FROM {table} t LEFT JOIN vectors v ON v.kind = ? AND v.row_id = t.id AND v.model = ?"
            f" WHERE v.row_id IS NULL{privacy_filter} ORDER BY t.id DESC LIMIT ?", (kind, model, limit - len(found)))]
    return found


def save(conn: sqlite3.Connection, model: str, rows: list[tuple[str, int, bytes]]) -> None:
    """Store vectors of `model` (replacing any older model's)."""
    with transaction(conn):
        conn.executemany("INSERT OR REPLACE INTO vectors (kind, row_id, model, vector) VALUES (?, ?, ?, ?)",
                         [(kind, row_id, model, vector) for kind, row_id, vector in rows])


def progress(conn: sqlite3.Connection, model: str) -> dict[str, int]:
    """{embedded, total}: rows with a vector of `model`, and rows that should have one."""
    total = sum(conn.execute(f"SELECT COUNT(*) FROM {table}" + (" WHERE private = 0" if kind == "prompt" else ""))
                .fetchone()[0] for kind, (table, _text) in _TEXTS.items())
    embedded = conn.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]
    return {"embedded": embedded, "total": total}


def any_vector(conn: sqlite3.Connection, model: str) -> bool:
    """True when some row has a vector of `model` (stops at the first: no count of every row)."""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM vectors WHERE model = ?)", (model,)).fetchone()[0])


def generation(conn: sqlite3.Connection) -> int:
    """A number that changes whenever an observation vector is added or removed (migrations m005, m015)."""
    return int(conn.execute("SELECT generation FROM vector_generation WHERE id = 1").fetchone()[0])


def database_file(conn: sqlite3.Connection) -> str:
    """The main database's file ("" in memory): with `generation`, what identifies cached vectors."""
    return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")


def observation_vectors(conn: sqlite3.Connection, model: str) -> list[tuple[int, str, bytes]]:
    """(observation id, project, vector) of every observation with a vector of `model`, by id."""
    return conn.execute(
        "SELECT o.id, o.project, v.vector FROM vectors v JOIN observations o ON o.id = v.row_id"
        " WHERE v.kind = 'observation' AND v.model = ? ORDER BY o.id", (model,)).fetchall()


def filtered_observation_ids(conn: sqlite3.Connection, filters: SearchFilters) -> list[int]:
    """The ids of every observation that passes `filters`."""
    where, args = observation_filters(filters)
    return [row[0] for row in conn.execute(
        "SELECT o.id FROM observations o" + (" WHERE " + " AND ".join(where) if where else ""), args)]
