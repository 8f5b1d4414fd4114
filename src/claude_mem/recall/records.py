"""Fetch full records by id (`show`, `get_observations`), counting each observation fetch.

`fetch_count` measures which memories are actually used.
"""

import sqlite3
from collections.abc import Iterable
from typing import Any

from claude_mem.domain import RecallError, UnknownRecord, parse_ref, ref
from claude_mem.store import memory


def get_observations(conn: sqlite3.Connection, ids: Iterable[int], count_fetch: bool = True) -> list[dict[str, Any]]:
    """Full observations in the order asked (unknown ids skipped); increments their `fetch_count`."""
    return [dict(row) for row in memory.observations_by_id(conn, ids, count_fetch)]


def fetch(conn: sqlite3.Connection, refs: Iterable[str]) -> tuple[list[dict], list[str]]:
    """(records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; the refs not found).

    Observations found count one fetch each. RecallError when a ref does not parse or none is given.
    """
    parsed = [parse_ref(text) for text in refs]
    if not parsed:
        raise RecallError("no id given")
    observations = {item["id"]: item for item in get_observations(conn, [i for k, i in parsed if k == "observation"])}
    result, missing = [], []
    for kind, row_id in parsed:
        if kind == "observation":
            item = observations.get(row_id)
        elif kind == "summary":
            summary = memory.summary_by_id(conn, row_id)
            item = dict(summary) if summary is not None else None
        else:
            item = memory.prompt_by_id(conn, row_id)
        if item is None:
            missing.append(ref(kind, row_id))
        else:
            result.append({"kind": kind, **item})
    return result, missing


def get_many(conn: sqlite3.Connection, refs: Iterable[str]) -> list[dict]:
    """Records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; RecallError on an unknown one."""
    result, missing = fetch(conn, refs)
    if missing:
        raise UnknownRecord(f"unknown id(s): {', '.join(missing)}")
    return result
