"""The local half of team memory (DESIGN §12): what to push, marking it pushed, applying what was
pulled, tombstones, and the team service's own state.

Rows written on this machine have `device` NULL; `team_rev` is NULL until the team server has them
(a session that changes after its push goes back to NULL: migration m008's trigger). Rows pulled from
the server carry the author and device that wrote them and their server revision, and are never
pushed back. A deleted row leaves a tombstone (its uid) that the team service pushes, then drops.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from claude_mem.store import rows
from claude_mem.store.rows import ObservationRow, SummaryRow
from claude_mem.store.transaction import transaction

KINDS = ("session", "prompt", "observation", "summary")
TABLES = {"session": "sessions", "prompt": "prompts", "observation": "observations", "summary": "summaries"}
# A row pushed or pulled: its columns that travel, plus its session's uid, Claude Code id and start.
TeamRow = dict[str, Any]
# One machine's own bookkeeping, which never travels; author and device are the server's to say.
_LOCAL = ("id", "session_id", "event_id", "fetch_count", "author", "device", "team_rev", "processed_at",
          "superseded_by")
TRAVELS = {"observation": rows.columns_except(ObservationRow, _LOCAL),
           "summary": rows.columns_except(SummaryRow, _LOCAL)}
_SESSION_OF = "s.uid AS session_uid, s.content_session_id, s.started_at AS session_started_at"

# What travels, per kind: everything that makes the row what it is, nothing that is one machine's own
# bookkeeping (row ids, fetch counts, the observer's session, when it was last injected, the cwd).
_SELECT = {
    "session": (
        "SELECT s.id, s.uid, s.project, s.content_session_id, s.title, s.status, s.started_at, s.ended_at,"
        " s.last_activity_at FROM sessions s"
    ),
    "prompt": (
        "SELECT p.id, p.uid, s.project, s.uid AS session_uid, s.content_session_id, s.started_at AS session_started_at,"
        " p.prompt_number, p.text, p.created_at FROM prompts p JOIN sessions s ON s.id = p.session_id"
    ),
    "observation": (
        f"SELECT o.id, {_SESSION_OF}, {rows.select(TRAVELS['observation'], 'o')}"
        " FROM observations o LEFT JOIN sessions s ON s.id = o.session_id"
    ),
    "summary": (
        f"SELECT m.id, {_SESSION_OF}, {rows.select(TRAVELS['summary'], 'm')}"
        " FROM summaries m JOIN sessions s ON s.id = m.session_id"
    ),
}
_UNPUSHED = {
    "session": " WHERE s.team_rev IS NULL AND s.device IS NULL AND s.project IN ({marks}) AND s.id > ?"
               " ORDER BY s.id LIMIT ?",
    "prompt": " WHERE p.team_rev IS NULL AND p.device IS NULL AND p.private = 0 AND s.project IN ({marks})"
              " AND p.id > ? ORDER BY p.id LIMIT ?",
    "observation": " WHERE o.team_rev IS NULL AND o.device IS NULL AND o.project IN ({marks}) AND o.id > ?"
                   " ORDER BY o.id LIMIT ?",
    "summary": " WHERE m.team_rev IS NULL AND m.device IS NULL AND m.project IN ({marks}) AND m.id > ?"
               " ORDER BY m.id LIMIT ?",
}
_COUNT_UNPUSHED = {
    "session": "SELECT COUNT(*) FROM sessions WHERE team_rev IS NULL AND device IS NULL AND project IN ({marks})",
    "prompt": "SELECT COUNT(*) FROM prompts p JOIN sessions s ON s.id = p.session_id WHERE p.team_rev IS NULL"
              " AND p.device IS NULL AND p.private = 0 AND s.project IN ({marks})",
    "observation": "SELECT COUNT(*) FROM observations WHERE team_rev IS NULL AND device IS NULL"
                   " AND project IN ({marks})",
    "summary": "SELECT COUNT(*) FROM summaries WHERE team_rev IS NULL AND device IS NULL AND project IN ({marks})",
}


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


# -- projects ------------------------------------------------------------------------------------------


def local_projects(conn: sqlite3.Connection) -> dict[str, str | None]:
    """Every project key this store knows (recorded, or holding rows) → its normalised remote or None."""
    found: dict[str, str | None] = {}
    for key, remote in conn.execute(
        "SELECT key, remote FROM projects UNION ALL SELECT DISTINCT project, NULL FROM sessions"
        " UNION ALL SELECT DISTINCT project, NULL FROM observations"
    ):
        if remote or key not in found:
            found[str(key)] = remote
    return found


def project_for_team(conn: sqlite3.Connection, team_project: str, at: str) -> str:
    """The local key of a team project (a normalised remote, or a path for a project without one):
    the project this store knows by that remote or key, else a new project keyed by it. Inside the
    caller's transaction."""
    row = conn.execute(
        "SELECT project FROM project_aliases WHERE alias = :id"
        " UNION ALL SELECT key FROM (SELECT key FROM projects WHERE remote = :id ORDER BY first_seen, key LIMIT 1)"
        " UNION ALL SELECT key FROM projects WHERE key = :id LIMIT 1",
        {"id": team_project},
    ).fetchone()
    if row:
        return str(row[0])
    remote = None if team_project.startswith("/") else team_project
    conn.execute("INSERT INTO projects (key, remote, first_seen) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                 (team_project, remote, at))
    return team_project


# -- push ----------------------------------------------------------------------------------------------


def _row_dict(cursor: sqlite3.Cursor, row: Sequence[object]) -> TeamRow:
    return rows.decode({column[0]: value for column, value in zip(cursor.description, row, strict=True)})


def unpushed(conn: sqlite3.Connection, kind: str, projects: Sequence[str], limit: int,
             after: int = 0) -> list[TeamRow]:
    """Up to `limit` rows of `kind` in `projects` that the team server does not have yet, oldest first."""
    if not projects:
        return []
    cursor = conn.execute(_SELECT[kind] + _UNPUSHED[kind].format(marks=_marks(projects)),
                          (*projects, after, limit))
    return [_row_dict(cursor, row) for row in cursor.fetchall()]


def unpushed_count(conn: sqlite3.Connection, projects: Sequence[str], kinds: Iterable[str] = KINDS) -> int:
    """Rows waiting to be pushed (the outbox), over `kinds`, plus the tombstones."""
    tombstones = int(conn.execute("SELECT COUNT(*) FROM team_tombstones").fetchone()[0])
    if not projects:
        return tombstones
    marks = _marks(projects)
    return tombstones + sum(int(conn.execute(_COUNT_UNPUSHED[kind].format(marks=marks), list(projects)).fetchone()[0])
                            for kind in kinds)


def mark_pushed(conn: sqlite3.Connection, kind: str, revisions: Sequence[tuple[int, str, int]]) -> list[str]:
    """Record the server revision of pushed rows, given as (row id, uid, rev); returns the uids no
    longer here (deleted while they were being pushed: their tombstone is waiting)."""
    table = TABLES[kind]
    gone = []
    with transaction(conn):
        for row_id, uid, rev in revisions:
            changed = conn.execute(f"UPDATE {table} SET team_rev = ? WHERE id = ? AND uid = ? AND team_rev IS NULL",
                                   (rev, row_id, uid)).rowcount
            if not changed and conn.execute(f"SELECT 1 FROM {table} WHERE uid = ?", (uid,)).fetchone() is None:
                gone.append(uid)
    return gone


def tombstones(conn: sqlite3.Connection, limit: int) -> list[dict[str, str]]:
    """The oldest `limit` tombstones: {uid, kind, project}."""
    return [{"uid": uid, "kind": kind, "project": project} for uid, kind, project in conn.execute(
        "SELECT uid, kind, project FROM team_tombstones ORDER BY deleted_at, uid LIMIT ?", (limit,))]


def drop_tombstones(conn: sqlite3.Connection, uids: Sequence[str]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM team_tombstones WHERE uid = ?", [(uid,) for uid in uids])


def session_prompts(conn: sqlite3.Connection, session_uids: Sequence[str]) -> dict[str, list[str]]:
    """Session uid → the texts of its prompts (private ones too: what must not leave is known here)."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(session_uids), 500):
        chunk = list(session_uids[start:start + 500])
        for uid, text in conn.execute(
                f"SELECT s.uid, p.text FROM prompts p JOIN sessions s ON s.id = p.session_id"
                f" WHERE s.uid IN ({_marks(chunk)}) ORDER BY p.session_id, p.prompt_number", chunk):
            found.setdefault(str(uid), []).append(str(text or ""))
    return found


# -- pull ----------------------------------------------------------------------------------------------


def _session_id(conn: sqlite3.Connection, row: TeamRow, project: str) -> int | None:
    """The local id of a pulled row's session, made as a placeholder if its own row has not arrived
    (it comes later and fills it in); None for a manual note."""
    payload = row["payload"]
    uid = payload.get("session_uid")
    if not uid:
        return None
    found = conn.execute("SELECT id FROM sessions WHERE uid = ?", (uid,)).fetchone()
    if found:
        return int(found[0])
    return placeholder_session(conn, row, project)


def placeholder_session(conn: sqlite3.Connection, row: TeamRow, project: str) -> int | None:
    """A stand-in for the session of a pulled row whose own session row has not arrived: its local id."""
    payload = row["payload"]
    uid = payload["session_uid"]
    started = payload.get("session_started_at") or payload.get("created_at")
    cursor = conn.execute(
        "INSERT INTO sessions (uid, content_session_id, project, status, started_at, last_activity_at, author, device,"
        " team_rev) VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING",
        (uid, payload.get("content_session_id") or f"team-{uid}", project, started, started, row["author"],
         row["device"]),
    )
    return cursor.lastrowid if cursor.rowcount else None


SESSION_UPSERT = (
    "INSERT INTO sessions (uid, content_session_id, project, title, status, started_at, ended_at, last_activity_at,"
    " author, device, team_rev) VALUES (:uid, :csid, :project, :title, :status, :started, :ended, :last, :author,"
    " :device, :rev)"
    " ON CONFLICT (uid) DO UPDATE SET title = excluded.title, status = excluded.status,"
    " ended_at = excluded.ended_at, last_activity_at = excluded.last_activity_at, author = excluded.author,"
    " device = excluded.device, team_rev = excluded.team_rev WHERE sessions.device IS NOT NULL"
    " ON CONFLICT DO NOTHING"
)
PROMPT_UPSERT = (
    "INSERT INTO prompts (uid, session_id, prompt_number, text, created_at, author, device, team_rev)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO UPDATE SET team_rev = excluded.team_rev"
    " WHERE prompts.device IS NOT NULL ON CONFLICT DO NOTHING"
)
# A pulled observation or summary: new, or only its revision moves (its content is the author's to change).
UPSERT_TAIL = {"observations": " ON CONFLICT (uid) DO UPDATE SET team_rev = excluded.team_rev"
                               " WHERE observations.device IS NOT NULL ON CONFLICT DO NOTHING",
               "summaries": " ON CONFLICT (uid) DO UPDATE SET team_rev = excluded.team_rev"
                            " WHERE summaries.device IS NOT NULL ON CONFLICT DO NOTHING"}


def session_values(row: TeamRow, project: str) -> dict[str, object]:
    p = row["payload"]
    return {"uid": row["uid"], "csid": p.get("content_session_id") or f"team-{row['uid']}", "project": project,
            "title": p.get("title"), "status": p.get("status") if p.get("status") in (
                "active", "completed", "failed", "interrupted") else "completed",
            "started": p.get("started_at"), "ended": p.get("ended_at"),
            "last": p.get("last_activity_at") or p.get("started_at"), "author": row["author"],
            "device": row["device"], "rev": row["rev"]}


def prompt_values(row: TeamRow, session_id: int) -> tuple[object, ...]:
    p = row["payload"]
    return (row["uid"], session_id, int(p.get("prompt_number") or 0), str(p.get("text") or ""), p.get("created_at"),
            row["author"], row["device"], row["rev"])


def _upsert_session(conn: sqlite3.Connection, row: TeamRow, project: str) -> None:
    conn.execute(SESSION_UPSERT, session_values(row, project))


def _upsert_prompt(conn: sqlite3.Connection, row: TeamRow, project: str) -> None:
    session_id = _session_id(conn, row, project)
    if session_id is None:
        return
    conn.execute(PROMPT_UPSERT, prompt_values(row, session_id))


def pulled_values(row: TeamRow, row_type: type, project: str, session_id: int | None) -> dict[str, object]:
    """A pulled observation's or summary's columns: its content made the types our columns hold, the
    rest as the teammate's machine stored it, and who wrote it at which server revision."""
    p = row["payload"]
    values = {"uid": row["uid"], "session_id": session_id, "project": project,
              "prompt_number": p.get("prompt_number"), **rows.content_from(row_type, p),
              "input_tokens": int(p.get("input_tokens") or 0), "output_tokens": int(p.get("output_tokens") or 0),
              "created_at": p.get("created_at"), "author": row["author"], "device": row["device"],
              "team_rev": row["rev"]}
    if row_type is ObservationRow:
        values["content_hash"] = str(p.get("content_hash") or row["uid"])
    return values


def _upsert_observation(conn: sqlite3.Connection, row: TeamRow, project: str) -> None:
    values = pulled_values(row, ObservationRow, project, _session_id(conn, row, project))
    conn.execute(rows.insert("observations", values) + UPSERT_TAIL["observations"], values)


def _upsert_summary(conn: sqlite3.Connection, row: TeamRow, project: str) -> None:
    session_id = _session_id(conn, row, project)
    if session_id is None:
        return
    values = pulled_values(row, SummaryRow, project, session_id)
    conn.execute(rows.insert("summaries", values) + UPSERT_TAIL["summaries"], values)


UPSERT = {"session": _upsert_session, "prompt": _upsert_prompt, "observation": _upsert_observation,
           "summary": _upsert_summary}


def apply_pulled(conn: sqlite3.Connection, pulled: Sequence[TeamRow], local_project: dict[str, str]) -> dict[str, int]:
    """Store rows pulled from the server ({uid, kind, project, author, device, payload, deleted, rev}),
    in revision order, in one transaction: new and changed rows upserted by uid, tombstones deleted
    (their own tombstones dropped: the server has them). `local_project` maps the team project of each
    row to its local key. Returns {"stored": n, "deleted": n, "skipped": n (rows it cannot hold)}."""
    stored = deleted = skipped = 0
    with transaction(conn):
        waiting = {uid for (uid,) in conn.execute("SELECT uid FROM team_tombstones")}
        for row in pulled:
            table = TABLES[row["kind"]]
            if row["deleted"]:
                deleted += conn.execute(f"DELETE FROM {table} WHERE uid = ?", (row["uid"],)).rowcount
                continue
            # A row this store cannot hold (a teammate's newer or damaged data) is skipped, not allowed to
            # stop every later row from arriving.
            conn.execute("SAVEPOINT pulled_row")
            try:
                UPSERT[row["kind"]](conn, row, local_project[row["project"]])
                stored += 1
            except (sqlite3.IntegrityError, TypeError, ValueError, KeyError):
                conn.execute("ROLLBACK TO pulled_row")
                skipped += 1
            conn.execute("RELEASE pulled_row")
        if deleted:
            # What these deletions took with them (a session's rows cascade) is deleted on the server too.
            made = [uid for (uid,) in conn.execute("SELECT uid FROM team_tombstones") if uid not in waiting]
            conn.executemany("DELETE FROM team_tombstones WHERE uid = ?", [(uid,) for uid in made])
    return {"stored": stored, "deleted": deleted, "skipped": skipped}


def delete_rows(conn: sqlite3.Connection, kind: str, uids: Sequence[str]) -> int:
    """Delete local rows the server holds as deleted (their tombstones are dropped: nothing to push)."""
    if not uids:
        return 0
    with transaction(conn):
        count = conn.execute(f"DELETE FROM {TABLES[kind]} WHERE uid IN ({_marks(uids)})", list(uids)).rowcount
        conn.execute(f"DELETE FROM team_tombstones WHERE uid IN ({_marks(uids)})", list(uids))
    return count


_PROJECT_COLUMN = {"session": "s.project", "prompt": "s.project", "observation": "o.project", "summary": "m.project"}


def team_rows(conn: sqlite3.Connection, projects: Sequence[str]) -> dict[str, TeamRow]:
    """uid → {kind, author, device, what travels} of every shareable row of `projects` (checks and tests)."""
    found: dict[str, TeamRow] = {}
    table_alias = {"session": "s", "prompt": "p", "observation": "o", "summary": "m"}
    for kind in KINDS:
        alias = table_alias[kind]
        select = _SELECT[kind].replace(" FROM ", f", {alias}.author AS author, {alias}.device AS device FROM ", 1)
        cursor = conn.execute(f"{select} WHERE {_PROJECT_COLUMN[kind]} IN ({_marks(projects)})", list(projects))
        for row in cursor.fetchall():
            item = _row_dict(cursor, row)
            item.pop("id")
            uid = item.pop("uid")
            found[uid] = {"kind": kind, **item}
    return found


# -- the service's state ------------------------------------------------------------------------------


def state(conn: sqlite3.Connection) -> dict[str, str]:
    return {str(key): str(value) for key, value in conn.execute("SELECT key, value FROM team_state")}


def set_state(conn: sqlite3.Connection, values: dict[str, object]) -> None:
    with transaction(conn):
        conn.executemany("INSERT INTO team_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
                         " value = excluded.value", [(key, str(value)) for key, value in values.items()])


def pull_skips(saved: dict[str, str]) -> str | None:
    """One line on the pulled rows left out (over the size limit, malformed) or stored without fields
    this version does not know, from the counters the puller keeps in team_state; None when none were."""
    counts = {key: int(saved.get(key, "0") or 0) for key in ("skipped_oversize", "skipped_malformed", "newer_fields")}
    if not any(counts.values()):
        return None
    return (f"pulled rows skipped: {counts['skipped_oversize']} over the size limit, {counts['skipped_malformed']}"
            f" malformed; {counts['newer_fields']} stored without fields of a newer claude-mem"
            f" (last: {saved.get('last_skip', '?')}; the worker log has each)")


def authors(conn: sqlite3.Connection) -> list[dict[str, object]]:
    """Teammates whose memory this store holds: [{author, observations}], most first."""
    return [{"author": author, "observations": int(count)} for author, count in conn.execute(
        "SELECT author, COUNT(*) FROM observations WHERE author IS NOT NULL GROUP BY author ORDER BY 2 DESC, 1")]
