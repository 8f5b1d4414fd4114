"""Fetch full records by id (`show`, `get_observations`), counting each observation fetch.

`fetch_count` measures which memories are actually used; it is not indexed text, so the update
does not touch FTS.
"""

import sqlite3
from collections.abc import Iterable

from claude_mem.recall.common import RecallError, UnknownRecord, parse_ref, row_dict
from claude_mem.store import db


def get_observations(conn: sqlite3.Connection, ids: Iterable[int], count_fetch: bool = True) -> list[dict]:
    """Full observations in the order asked (unknown ids skipped); increments their `fetch_count`."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    if not wanted:
        return []
    marks = ", ".join("?" for _ in wanted)
    if count_fetch:
        with db.transaction(conn):
            conn.execute(f"UPDATE observations SET fetch_count = fetch_count + 1 WHERE id IN ({marks})", wanted)
    cursor = conn.execute(f"SELECT * FROM observations WHERE id IN ({marks})", wanted)
    found = {item["id"]: item for item in (row_dict(cursor, row) for row in cursor.fetchall())}
    return [found[i] for i in wanted if i in found]


def get_summary(conn: sqlite3.Connection, summary_id: int) -> dict | None:
    cursor = conn.execute("SELECT * FROM summaries WHERE id = ?", (summary_id,))
    row = cursor.fetchone()
    return row_dict(cursor, row) if row else None


def get_prompt(conn: sqlite3.Connection, prompt_id: int) -> dict | None:
    cursor = conn.execute(
        "SELECT p.*, s.project AS project, s.content_session_id AS content_session_id FROM prompts p"
        " JOIN sessions s ON s.id = p.session_id WHERE p.id = ? AND p.private = 0",
        (prompt_id,),
    )
    row = cursor.fetchone()
    return row_dict(cursor, row) if row else None


def fetch(conn: sqlite3.Connection, refs: Iterable[str]) -> tuple[list[dict], list[str]]:
    """(records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; the refs not found).

    Observations found count one fetch each. RecallError when a ref does not parse or none is given.
    """
    parsed = [parse_ref(ref) for ref in refs]
    if not parsed:
        raise RecallError("no id given")
    observations = {item["id"]: item for item in get_observations(conn, [i for k, i in parsed if k == "observation"])}
    result, missing = [], []
    for kind, row_id in parsed:
        if kind == "observation":
            item = observations.get(row_id)
        elif kind == "summary":
            item = get_summary(conn, row_id)
        else:
            item = get_prompt(conn, row_id)
        if item is None:
            missing.append({"observation": "#", "summary": "S", "prompt": "P"}[kind] + str(row_id))
        else:
            result.append({"kind": kind, **item})
    return result, missing


def get_many(conn: sqlite3.Connection, refs: Iterable[str]) -> list[dict]:
    """Records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; RecallError on an unknown one."""
    result, missing = fetch(conn, refs)
    if missing:
        raise UnknownRecord(f"unknown id(s): {', '.join(missing)}")
    return result
