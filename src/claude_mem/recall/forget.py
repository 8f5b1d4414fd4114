"""`forget`: remove observations, a session or a project — rows, FTS entries and their bytes.

This module decides *what* a forget means (exactly one target, unknown ones are an error, what to
tell the user); `claude_mem.store.forget` deletes it from the database and every backup and scrubs
the freed bytes (FTS optimize, VACUUM, WAL truncate).
"""

from collections.abc import Iterable
from typing import Any

from claude_mem.domain import RecallError, UnknownRecord, ref
from claude_mem.store import Store
from claude_mem.store import forget as repository


def plan(
    conn: Store, ids: Iterable[int] = (), session: str | None = None, project: str | None = None
) -> dict[str, Any]:
    """What a forget would remove: `{target, counts, describe}`; RecallError for unknown targets.

    The target names rows by what is stable across copies of the database (see `store.forget`), so
    the same plan applies to every backup — and names exactly the observations asked for.
    """
    wanted = sorted({int(i) for i in ids})
    if sum(bool(x) for x in (wanted, session, project)) != 1:
        raise RecallError("say what to forget: observation ids, or --session, or --project (one of them)")
    if wanted:
        found = repository.observation_targets(conn, wanted)
        missing = [i for i in wanted if i not in found]
        if missing:
            raise UnknownRecord(f"unknown observation id(s): {', '.join(ref('observation', i) for i in missing)}")
        events = repository.orphan_event_keys(conn, wanted)
        # The summaries of the turns they came from restate them: they go too, and the user is told.
        summaries = repository.turn_summaries(conn, wanted)
        describe = f"{len(found)} observation(s) ({', '.join(ref('observation', i) for i in wanted)})"
        counts = {"observations": len(found), "events": len(events)}
        if summaries:
            counts["summaries"] = len(summaries)
            turns = "its turn" if len(wanted) == 1 else "their turns"
            noun = "summary" if len(summaries) == 1 else "summaries"
            describe += f" and the {noun} of {turns} ({', '.join(ref('summary', i) for i in summaries)})"
        return {
            "target": {"observations": [found[i] for i in wanted], "event_keys": events,
                       "summaries": list(summaries.values())},
            "counts": counts,
            "describe": describe,
        }
    if session:
        row = repository.find_session(conn, session)
        if row is None:
            raise UnknownRecord(f"unknown session {session!r}")
        session_id, content_id = row
        return {"target": {"session": content_id}, "counts": repository.session_counts(conn, session_id),
                "describe": f"session {content_id}"}
    assert project is not None
    counts = repository.project_counts(conn, project)
    if not counts["sessions"] and not counts["observations"]:
        raise UnknownRecord(f"nothing stored for project {project!r}")
    return {"target": {"project": project}, "counts": counts, "describe": f"project {project}"}


def carry_out(conn: Store, data_dir: str, planned: dict[str, Any]) -> dict[str, Any]:
    """Delete and scrub what `planned` names, then fix the backups: `{forgot, counts, removed, backups}`.

    `removed` lists what left this database — `{observations, summaries, prompts}` by row id,
    `sessions` by Claude Code id, and `project` (the key when a whole project was forgotten, else
    None) — so that open viewers can drop those rows.
    """
    target = planned["target"]
    removed = {**repository.removed_ids(conn, target), "project": target.get("project")}
    repository.apply(conn, target)
    return {"forgot": planned["describe"], "counts": planned["counts"], "removed": removed,
            "backups": repository.rewrite_backups(data_dir, target)}


def forget(
    conn: Store, data_dir: str, ids: Iterable[int] = (), session: str | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """Plan, delete, scrub, then fix the backups; returns what `carry_out` reports."""
    return carry_out(conn, data_dir, plan(conn, ids, session, project))
