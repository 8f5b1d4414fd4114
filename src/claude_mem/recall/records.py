"""Fetch full records by id (`show`, `get_observations`), counting each observation fetch.

`fetch_count` counts every fetch; an observation also carries `use` (issue 30): in how many sessions
it was shown, how many used it, and when it was last used.
"""

from collections.abc import Iterable, Mapping

from claude_mem.domain import RecallError, UnknownRecord, parse_ref, ref
from claude_mem.recall import freshness
from claude_mem.store import DatabaseError, Store, memory
from claude_mem.store import use as store_use
from claude_mem.store.memory import Record
from claude_mem.store.rows import ObservationRow


def get_observations(conn: Store, ids: Iterable[int], count_fetch: bool = True) -> list[ObservationRow]:
    """Full observations in the order asked (unknown ids skipped); increments their `fetch_count`."""
    return memory.observations_by_id(conn, ids, count_fetch)


def fetch(conn: Store, refs: Iterable[str]) -> tuple[list[Record], list[str]]:
    """(records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; the refs not found).

    Observations found count one fetch each. RecallError when a ref does not parse or none is given.
    """
    parsed = [parse_ref(text) for text in refs]
    if not parsed:
        raise RecallError("no id given")
    observations = {item["id"]: item for item in get_observations(conn, [i for k, i in parsed if k == "observation"])}
    # Issue 26: an observation names what it superseded (its successor is its own `superseded_by`).
    predecessors = memory.superseded_ones(conn, observations)
    try:
        used = store_use.of_observations(conn, list(observations))
    except DatabaseError:  # a read-only open of a store from before m018: nothing recorded yet
        used = {}
    result: list[Record] = []
    missing: list[str] = []
    for kind, row_id in parsed:
        item: Mapping[str, object] | None
        if kind == "observation":
            item = observations.get(row_id)
        elif kind == "summary":
            item = memory.summary_by_id(conn, row_id)
        else:
            item = memory.prompt_by_id(conn, row_id)
        if item is None:
            missing.append(ref(kind, row_id))
        elif kind == "observation":
            result.append({"kind": kind, **item, "supersedes": predecessors.get(row_id, []),
                           "use": used.get(row_id, {"shown": 0, "used": 0, "last_used": None})})
        else:
            result.append({"kind": kind, **item})
    freshness.Reader(conn, commits=True).annotate(result)
    return result, missing


def get_many(conn: Store, refs: Iterable[str]) -> list[Record]:
    """Records for refs like `12`, `#12`, `S3`, `P7`, each tagged with its `kind`; RecallError on an unknown one."""
    result, missing = fetch(conn, refs)
    if missing:
        raise UnknownRecord(f"unknown id(s): {', '.join(missing)}")
    return result
