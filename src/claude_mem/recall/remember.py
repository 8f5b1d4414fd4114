"""`remember`: a manual observation, stored like any other so it shows in context and search."""

import hashlib
import re
import sqlite3

from claude_mem.recall.common import RecallError, row_dict
from claude_mem.store import db
from claude_mem.domain import OBSERVATION_TYPES

MAX_TEXT_CHARS = 20_000
TITLE_CHARS = 100


def default_title(text: str) -> str:
    """The first sentence or line of `text`, cut at a word boundary."""
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0].strip()
    if len(first) <= TITLE_CHARS:
        return first
    cut = first[:TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut or first[:TITLE_CHARS]).rstrip(",;:") + "…"


def content_hash(kind: str, title: str, text: str) -> str:
    return hashlib.sha256("\x1f".join(("manual", kind, title, text)).encode("utf-8")).hexdigest()


def remember(
    conn: sqlite3.Connection, text: str, project: str, kind: str = "discovery", title: str | None = None
) -> dict:
    """Store a manual observation (no session); the same note twice returns the first. Adds `created`."""
    body = (text or "").strip()
    if not body:
        raise RecallError("nothing to remember: the text is empty")
    if len(body) > MAX_TEXT_CHARS:
        raise RecallError(f"the text is too long ({len(body)} characters; at most {MAX_TEXT_CHARS})")
    if kind not in OBSERVATION_TYPES:
        raise RecallError(f"unknown type {kind!r} (known: {', '.join(OBSERVATION_TYPES)})")
    heading = " ".join((title or "").split()) or default_title(body)
    digest = content_hash(kind, heading, body)
    with db.transaction(conn):
        existing = conn.execute(
            "SELECT id FROM observations WHERE session_id IS NULL AND project = ? AND content_hash = ?",
            (project, digest),
        ).fetchone()
        created = existing is None
        if created:
            row_id = conn.execute(
                "INSERT INTO observations (session_id, project, type, title, narrative, concepts, content_hash)"
                " VALUES (NULL, ?, ?, ?, ?, '[\"manual\"]', ?)",
                (project, kind, heading, body, digest),
            ).lastrowid
        else:
            row_id = existing[0]
    cursor = conn.execute("SELECT * FROM observations WHERE id = ?", (row_id,))
    return {**row_dict(cursor, cursor.fetchone()), "created": created}
