"""What the session-start and user-prompt hooks read (and the one thing session-start writes).

The newest observations of a project for the index, their total, the latest summary, the count of
failed events, when a session last received context, and the prompt-context FTS matches. Stdlib
only and import-light (no typing, dataclasses, pathlib or logging): it runs inside the hooks.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the C module: the `sqlite3` package imports `datetime` for adapters unused here

from claude_mem.store.transaction import transaction

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any


# BM25 weight of the `context` column of every full-text index (m017: the text of a row's neighbours in
# its session), chosen on conversations 1-3 of the LoCoMo dev split and checked on 4-5 (`bench/README.md`).
CONTEXT_WEIGHT = 0.35
# BM25 column weights of observations_fts (title, subtitle, narrative, facts, concepts, context), chosen on
# the LoCoMo dev split (`python -m bench locomo`): even weights scored R@5 0.569 against 0.528 for the
# former title-heavy 8/4/1/1/2 (a title restates the narrative; boosting it counts one hit twice).
# Concepts are the observer's own keywords. Search and per-prompt memory rank with the same ones.
OBSERVATION_WEIGHTS = f"1.0, 1.0, 1.0, 1.0, 2.0, {CONTEXT_WEIGHT}"


def _since(since: str | None) -> tuple[str, str, tuple[str, ...]]:
    """(index to read observations through, condition, its arguments) for rows stored after `since`: when
    processed (an import or a backlog is dated by its events, earlier), through m015's index of that;
    without `since`, every row of the project through its index by event time (newest first, no sort)."""
    if since:
        return "observations_project_stored", " AND coalesce(processed_at, created_at) > ?", (since,)
    return "observations_project", "", ()


def _observations(conn: sqlite3.Connection, sql: str, index: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """`sql` (reading `observations{indexed}`) run through `index`: the planner, without statistics for a new
    index, may pick one that needs a sort of every row of the project; a database opened read-only from
    before m015 lacks it, and is read the way it was then."""
    try:
        return conn.execute(sql.format(indexed=f" INDEXED BY {index}"), args).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such index" not in str(exc):
            raise
        return conn.execute(sql.format(indexed=""), args).fetchall()


def observation_total(conn: sqlite3.Connection, project: str, since: str | None = None) -> int:
    """Observations of `project` (stored after `since`, when given): the project's count in the catalog
    (m015), or an index range of what was stored since."""
    if since is None:
        try:
            row = conn.execute("SELECT observations FROM projects WHERE key = ?", (project,)).fetchone()
            return int(row[0]) if row else 0
        except sqlite3.OperationalError:  # a read-only open of a database from before m015
            pass
    index, where, args = _since(since)
    return int(_observations(conn, f"SELECT COUNT(*) FROM observations{{indexed}} WHERE project = ?{where}", index,
                             (project, *args))[0][0])


def index_rows(conn: sqlite3.Connection, project: str, since: str | None, limit: int) -> list[tuple[Any, ...]]:
    """The newest current (not superseded) observations, newest first: (id, created_at, type, title,
    characters of their full text, author: None for this machine's own, a teammate's name for team memory)."""
    index, where, args = _since(since)
    return _observations(
        conn,
        "SELECT id, created_at, type, title, length(narrative) + length(facts) + length(title)"
        f" + coalesce(length(subtitle), 0), author FROM observations{{indexed}} WHERE project = ?{where}"
        " AND superseded_by IS NULL"  # a later fact replaced it (issue 26)
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        index, (project, *args, limit),
    )


def _summaries_since(since: str | None) -> tuple[str, tuple[str, ...]]:
    # as `_since`; a project has a summary per session, far fewer than observations
    return (" AND coalesce(processed_at, created_at) > ?", (since,)) if since else ("", ())


def latest_summary(conn: sqlite3.Connection, project: str, since: str | None = None) -> tuple[Any, ...] | None:
    """(created_at, request, learned, completed, next_steps) of the project's newest summary."""
    where, args = _summaries_since(since)
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT created_at, request, learned, completed, next_steps FROM summaries"
        f" WHERE project = ?{where} ORDER BY created_at DESC, id DESC LIMIT 1",
        (project, *args),
    ).fetchone()
    return row


def failed_event_count(conn: sqlite3.Connection, project: str) -> int:
    """Captured events of the project's sessions that the observer gave up on (the failed events first:
    usually none, while a project's sessions grow with the store)."""
    return int(conn.execute(
        "SELECT COUNT(*) FROM pending_events e CROSS JOIN sessions s ON s.id = e.session_id"
        " WHERE e.status = 'failed' AND s.project = ?",
        (project,),
    ).fetchone()[0])


def observer_spent_on(conn: sqlite3.Connection, day: str) -> int:
    """The observer's tokens (input + output, every provider) on UTC `day` (m018's ledger; 0 before it)."""
    try:
        return int(conn.execute("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM observer_spend"
                                " WHERE day = ?", (day,)).fetchone()[0])
    except sqlite3.OperationalError:  # a read-only open of a database from before m018
        return 0


def last_injection(conn: sqlite3.Connection, content_session_id: str) -> str | None:
    """When the session last received context; None for a session never seen."""
    row = conn.execute(
        "SELECT last_injected_at FROM sessions WHERE content_session_id = ?", (content_session_id,)
    ).fetchone()
    return row[0] if row else None


def record_injection(conn: sqlite3.Connection, content_session_id: str, project: str, cwd: str, at: str,
                     shown: list[int] | None = None, replace: bool = False, tokens: int = 0) -> bool:
    """Remember when this session last received context, which observations it listed and what the text
    cost in tokens (m018: `injections`); `replace`: a full index, so what it was shown before no longer
    keeps per-prompt memory from showing it again (it still counts as shown). False if busy or read-only."""
    try:
        with transaction(conn):
            conn.execute(
                "INSERT INTO sessions (content_session_id, project, cwd, last_injected_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (content_session_id) DO UPDATE SET last_injected_at = excluded.last_injected_at",
                (content_session_id, project, cwd, at),
            )
            if replace:
                conn.execute("UPDATE shown SET current = 0 WHERE session_id ="
                             " (SELECT id FROM sessions WHERE content_session_id = ?) AND current",
                             (content_session_id,))
            _insert_shown(conn, content_session_id, shown or [], "index", at, tokens)
    except sqlite3.Error:
        return False
    return True


def _insert_shown(conn: sqlite3.Connection, content_session_id: str, ids: list[int], via: str, at: str,
                  tokens: int) -> None:
    """`ids` shown to the session now (a row shown before keeps its first time and way), and the injection."""
    conn.executemany(
        "INSERT INTO shown (session_id, observation_id, via, at) SELECT s.id, o.id, ?, ? FROM sessions s, observations o"
        " WHERE s.content_session_id = ? AND o.id = ?"
        " ON CONFLICT (session_id, observation_id) DO UPDATE SET current = 1",
        [(via, at, content_session_id, row_id) for row_id in ids])
    conn.execute(
        "INSERT INTO injections (session_id, via, observations, tokens, at)"
        " SELECT id, ?, ?, ?, ? FROM sessions WHERE content_session_id = ?",
        (via, len(ids), int(tokens), at, content_session_id))


def record_shown(conn: sqlite3.Connection, content_session_id: str, ids: list[int], at: str, tokens: int = 0) -> bool:
    """Add observations shown to a session beside a prompt, and what the added text cost in tokens; False
    if busy, read-only or the session is unknown."""
    try:
        with transaction(conn):
            _insert_shown(conn, content_session_id, ids, "prompt", at, tokens)
    except sqlite3.Error:
        return False
    return True


def shown_ids(conn: sqlite3.Connection, content_session_id: str) -> set[int]:
    """The observations this session has been shown since its last full index (its index and later prompt
    memories)."""
    try:
        rows = conn.execute(
            "SELECT observation_id FROM shown WHERE session_id ="
            " (SELECT id FROM sessions WHERE content_session_id = ?) AND current", (content_session_id,)).fetchall()
    except sqlite3.OperationalError as exc:  # a read-only open of a database from before m018
        if "no such column" not in str(exc):
            raise
        rows = conn.execute("SELECT observation_id FROM shown WHERE session_id ="
                            " (SELECT id FROM sessions WHERE content_session_id = ?)", (content_session_id,)).fetchall()
    return {row[0] for row in rows}


def own_text(expression: str) -> str:
    """`expression` matched in a row's own text only, not in its neighbours' (m017's `context` column); so
    its BM25 idf counts only the rows that say a word themselves."""
    return f"- {{context}} : ({expression})"


def prompt_matches(conn: sqlite3.Connection, project: str, expression: str, limit: int,
                   candidates: str | None = None) -> list[tuple[Any, ...]]:
    """(id, created_at, type, title, subtitle, bm25) of the project's observations whose own text matches
    an FTS5 expression, best first (lower is better); with `candidates` (another expression), only the rows
    that match it too are ranked. Per-prompt memory thresholds this BM25 (`prompt_context.MIN_WORDS`), in
    unique words' worth: a neighbour's words would make every word of a session common, so they count not."""
    expression, candidates = own_text(expression), own_text(candidates) if candidates else None
    among = " AND +observations_fts.rowid IN (SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?)"
    return conn.execute(
        f"SELECT o.id, o.created_at, o.type, o.title, o.subtitle, bm25(observations_fts, {OBSERVATION_WEIGHTS})"
        " FROM observations_fts"
        " JOIN observations o ON o.id = observations_fts.rowid"
        f" WHERE observations_fts MATCH ?{among if candidates else ''} AND o.project = ? AND o.superseded_by IS NULL"
        f" ORDER BY bm25(observations_fts, {OBSERVATION_WEIGHTS}) LIMIT ?",
        (expression, *((candidates,) if candidates else ()), project, limit),
    ).fetchall()


def term_rows(conn: sqlite3.Connection, term: str) -> int:
    """How many observations (all projects) hold an FTS5 term in their own text: what its BM25 idf counts."""
    return int(conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?", (own_text(term),))
               .fetchone()[0])


def indexed_observations(conn: sqlite3.Connection) -> int:
    """How many observations the search index holds (all projects: BM25's idf counts them all), from the
    catalog's counts (m015)."""
    try:
        return int(conn.execute("SELECT coalesce(SUM(observations), 0) FROM projects").fetchone()[0])
    except sqlite3.OperationalError:  # a read-only open of a database from before m015
        return int(conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0])


def has_vectors(conn: sqlite3.Connection, model: str) -> bool:
    """Whether any row has a vector of `model` (search by meaning can answer), without counting them."""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM vector_model WHERE model = ?)"
                             " AND EXISTS (SELECT 1 FROM vectors WHERE kind = 0)", (model,)).fetchone()[0])


def known_projects(conn: sqlite3.Connection) -> list[str]:
    """Every project key with something stored (a session, an observation or a summary), sorted: the
    catalog (m015), never the rows."""
    try:
        return [row[0] for row in conn.execute(
            "SELECT key FROM projects WHERE sessions > 0 OR observations > 0 OR summaries > 0 ORDER BY key")]
    except sqlite3.OperationalError:  # a read-only open of a database from before m015
        return [row[0] for row in conn.execute(
            "SELECT project FROM sessions UNION SELECT project FROM observations UNION SELECT project FROM summaries"
            " ORDER BY 1")]
