"""Migration m017 (issue 29): every row is indexed with the story around it.

A memory rarely holds every word a later question uses: the answer to "what did we change after the
flaky login test?" sits in the observation after the one that names the test. So each full-text index
gets a second text column, `context`, weighted low at query time (`store.search`), holding the text of
the row's neighbours in the same session:

- an observation: the two observations before it and the two after it (by id: the order they were
  stored), and the prompt of its turn;
- a summary: the summary before and the one after, and the prompt of its turn;
- a prompt: the prompt before and the one after.

A private prompt lends no text to anyone (its own row is indexed as before and never returned). Each
neighbour lends at most `PIECE` characters. The vector of a row stays its own text's.

A new prompt does not rewrite the rows of its turn: they are stored after it (the observer writes them
later), and a prompt's insert must not depend on the other kinds' indexes (a capture hook writes it, and
a damaged observations index is repaired by the worker, not by losing the prompt). A prompt edited, made
private or deleted does rewrite them: its text must leave their context.

The context text is stored in `search_context` (kind 0 observation, 1 summary, 2 prompt), computed by
the views `<table>_context` from the rows themselves, and kept current (with the index) by the triggers of
each table on every write path. An edit, a delete (a forget) and a prompt made private rewrite, at once,
the context of every row whose window they fall in: forgotten text cannot be found through a neighbour.
An insert indexes the new row with the rows before it, and only queues the rows before it whose window
it joins (`context_queue`): the worker rewrites them within a second
(`store.context_field.refresh_queued`), off the write path. No write path moves a row to another session
or turn, so no trigger watches for it: the triggers are as short as they can be, since every connection
(each hook's) parses the schema once. The FTS5 tables read their text from the
views `<table>_search` (own columns and context).

**A row is in its full-text index exactly when it has a `search_context` row.** The migration itself
is quick: the old indexes are dropped and new, empty ones made; rows that existed before are indexed
in batches, newest first (`store.context_field.fill`: by the migration itself for a small store, else by
the worker), with `search_fill` remembering where each kind's scan is. Rows written meanwhile are
indexed at once by the triggers.

An index of the observations' authors (team memory) lets a search see which teammates a query names
(`store.search.known_authors`: one seek per author) for its field priors.
"""

from __future__ import annotations

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script

# Literal copies (a released migration must never change when another module does).
PIECE = 120
_TABLES: dict[str, tuple[int, tuple[str, ...], str, tuple[int, int], str]] = {
    # table: (kind, own columns, a neighbour's text (alias n), neighbours (before, after), order column)
    "observations": (0, ("title", "subtitle", "narrative", "facts", "concepts"),
                     "trim(COALESCE(n.title, '') || ' ' || COALESCE(n.subtitle, '') || ' ' || COALESCE(n.narrative, ''))",
                     (2, 2), "id"),
    "summaries": (1, ("request", "investigated", "learned", "completed", "next_steps", "notes"),
                  "trim(COALESCE(n.request, '') || ' ' || COALESCE(n.learned, '') || ' ' || COALESCE(n.completed, ''))",
                  (1, 1), "id"),
    "prompts": (2, ("text",), "CASE WHEN n.private = 0 THEN n.text END", (1, 1), "prompt_number"),
}
_TURN_PROMPT = (" || ' ' || COALESCE((SELECT substr(p.text, 1, {piece}) FROM prompts p WHERE p.session_id = r.session_id"
                " AND p.prompt_number = r.prompt_number AND p.private = 0), '')")


def _side(table: str, piece: str, window: int, order: str, before: bool) -> str:
    """The text of up to `window` neighbours of row `r` on one side, in its session."""
    op, direction = ("<", "DESC") if before else (">", "ASC")
    return (f"COALESCE((SELECT group_concat(piece, ' ') FROM (SELECT substr({piece}, 1, {PIECE}) AS piece"
            f" FROM {table} n WHERE r.session_id IS NOT NULL AND n.session_id = r.session_id"
            f" AND n.{order} {op} r.{order} ORDER BY n.{order} {direction} LIMIT {window})), '')")


def _neighbours(table: str, window: tuple[int, int], order: str, row: str) -> str:
    """The ids of the rows whose window holds `row` (old or new): the rows it follows closely enough to be
    after them, and those it precedes closely enough to be before them."""
    before, after = window
    return (f"SELECT id FROM (SELECT n.id FROM {table} n WHERE n.session_id = {row}.session_id"
            f" AND n.{order} < {row}.{order} ORDER BY n.{order} DESC LIMIT {after})"
            f" UNION ALL SELECT id FROM (SELECT n.id FROM {table} n WHERE n.session_id = {row}.session_id"
            f" AND n.{order} > {row}.{order} ORDER BY n.{order} LIMIT {before})")


def _refresh(table: str, kind: int, ids: str) -> str:
    """Recompute the stored context of the rows `ids` (an SQL list) of `table`, and re-index them with it.
    Inline in each trigger (no trigger on `search_context`): a statement then compiles only the indexes it
    writes, so a damaged index of one kind never stops a write of another."""
    columns = ", ".join((*_TABLES[table][1], "context"))
    return (f"INSERT INTO {table}_fts ({table}_fts, rowid, {columns}) SELECT 'delete', * FROM {table}_search"
            f" WHERE id IN ({ids});\n"
            f"UPDATE search_context SET text = (SELECT v.text FROM {table}_context v WHERE v.id = search_context.row_id)"
            f" WHERE kind = {kind} AND row_id IN ({ids});\n"
            f"INSERT INTO {table}_fts (rowid, {columns}) SELECT * FROM {table}_search WHERE id IN ({ids});")


def _turn_refresh(row: str) -> str:
    """A prompt changed: the observations and the summary of its turn hold its text."""
    return "\n".join(_refresh(table, kind, f"SELECT id FROM {table} WHERE session_id = {row}.session_id"
                                            f" AND prompt_number = {row}.prompt_number")
                     for table, (kind, *_rest) in _TABLES.items() if table != "prompts")


def _script(table: str) -> str:
    kind, own, piece, window, order = _TABLES[table]
    columns = ", ".join(own)
    old = ", ".join(f"old.{name}" for name in own)
    new = ", ".join(f"new.{name}" for name in own)
    t_own = ", ".join(f"t.{name}" for name in own)
    text = (f"trim({_side(table, piece, window[0], order, True)} || ' ' || {_side(table, piece, window[1], order, False)}"
            + (_TURN_PROMPT.format(piece=PIECE) if table != "prompts" else "") + ")")
    turn = {"new": _turn_refresh("new"), "old": _turn_refresh("old")} if table == "prompts" else {"new": "", "old": ""}
    changed = columns + (", private" if table == "prompts" else "")
    stored = f"SELECT c.text FROM search_context c WHERE c.kind = {kind} AND c.row_id"
    return f"""
        DROP TRIGGER IF EXISTS {table}_fts_insert;
        DROP TRIGGER IF EXISTS {table}_fts_delete;
        DROP TRIGGER IF EXISTS {table}_fts_update;
        DROP TABLE IF EXISTS {table}_fts;
        CREATE VIEW {table}_context AS SELECT r.id AS id, {text} AS text FROM {table} r;
        CREATE VIEW {table}_search AS SELECT t.id AS id, {t_own}, c.text AS context
            FROM {table} t JOIN search_context c ON c.kind = {kind} AND c.row_id = t.id;
        CREATE VIRTUAL TABLE {table}_fts USING fts5(
            {columns}, context, content='{table}_search', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER {table}_fts_insert AFTER INSERT ON {table} BEGIN
            INSERT OR REPLACE INTO search_context (kind, row_id, text)
                SELECT {kind}, v.id, v.text FROM {table}_context v WHERE v.id = new.id;
            INSERT INTO {table}_fts (rowid, {columns}, context) VALUES (new.id, {new}, ({stored} = new.id));
            INSERT OR IGNORE INTO context_queue (kind, row_id) {_neighbours(table, window, order, "new")
                                                                 .replace("SELECT id FROM", f"SELECT {kind}, id FROM")};
        END;
        CREATE TRIGGER {table}_fts_delete AFTER DELETE ON {table} BEGIN
            INSERT INTO {table}_fts ({table}_fts, rowid, {columns}, context)
                SELECT 'delete', old.id, {old}, c.text FROM search_context c WHERE c.kind = {kind} AND c.row_id = old.id;
            DELETE FROM search_context WHERE kind = {kind} AND row_id = old.id;
            {_refresh(table, kind, _neighbours(table, window, order, "old"))}
            {turn["old"]}
        END;
        CREATE TRIGGER {table}_fts_update AFTER UPDATE OF {changed} ON {table} BEGIN
            INSERT INTO {table}_fts ({table}_fts, rowid, {columns}, context)
                SELECT 'delete', old.id, {old}, c.text FROM search_context c WHERE c.kind = {kind} AND c.row_id = old.id;
            INSERT INTO {table}_fts (rowid, {columns}, context)
                SELECT new.id, {new}, c.text FROM search_context c WHERE c.kind = {kind} AND c.row_id = new.id;
            {_refresh(table, kind, _neighbours(table, window, order, "new"))}
            {turn["new"]}
        END;
        INSERT INTO search_fill (kind, below) SELECT {kind}, MAX(id) + 1 FROM {table} HAVING MAX(id) IS NOT NULL;
    """


def m017_search_context(conn: sqlite3.Connection) -> None:
    """See the module docstring. Rows stored before are indexed by `store.context_field.fill`."""
    run_script(conn, """
        CREATE TABLE search_context (
            kind INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),
            row_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (kind, row_id)
        ) WITHOUT ROWID;
        CREATE TABLE search_fill (
            kind INTEGER PRIMARY KEY,
            below INTEGER NOT NULL
        );
        CREATE TABLE context_queue (
            kind INTEGER NOT NULL,
            row_id INTEGER NOT NULL,
            PRIMARY KEY (kind, row_id)
        ) WITHOUT ROWID;
        CREATE INDEX observations_session_order ON observations (session_id, id);
        CREATE INDEX summaries_session_order ON summaries (session_id, id);
        CREATE INDEX observations_author ON observations (author) WHERE author IS NOT NULL;
    """)
    for table in _TABLES:
        run_script(conn, _script(table))
