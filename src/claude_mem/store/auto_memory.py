"""The auto memory repository (m019): Claude Code's memory files as indexed, and each project's last sync.

Written by one sync at a time (`recall.auto_memory.sync`: the worker's service, or `claude-mem search`
before it searches); read by search (`index`), the session-start context (`MEMORY.md`'s row: stdlib,
no other import), `status` and `doctor`. Each write keeps `auto_memory_fts` in step in the same
transaction (m019 has no triggers).
"""

from __future__ import annotations

import _sqlite3 as sqlite3

from claude_mem.store.transaction import transaction

NOTE_WEIGHTS = "4.0, 2.0, 1.0, 0.0"  # name, description, body, (empty) context
KIND = "auto-memory"
REF_PREFIX = "auto-memory:"
_FTS_COLUMNS = "name, description, body, context"
_FTS_DELETE = ("INSERT INTO auto_memory_fts (auto_memory_fts, rowid, " + _FTS_COLUMNS + ")"
               " SELECT 'delete', id, name, description, body, '' FROM auto_memory WHERE id = ?")
_FTS_INSERT = ("INSERT INTO auto_memory_fts (rowid, " + _FTS_COLUMNS + ")"
               " SELECT id, name, description, body, '' FROM auto_memory WHERE id = ?")


def exists(conn: sqlite3.Connection) -> bool:
    """Whether this store has m019's tables (a read-only open of an older store has not)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'auto_memory'").fetchone() \
        is not None


def known(conn: sqlite3.Connection, project: str) -> dict[str, tuple[int, int, str, bool]]:
    """path → (size, mtime_ns, hash, binary) of the files indexed for `project`."""
    return {row[0]: (int(row[1]), int(row[2]), str(row[3]), bool(row[4])) for row in conn.execute(
        "SELECT path, size, mtime_ns, hash, binary FROM auto_memory WHERE project = ?", (project,))}


def _unindex(conn: sqlite3.Connection, row_id: int) -> None:
    """Take a row out of the full-text index (a binary file's row was never in it)."""
    conn.execute(_FTS_DELETE + " AND binary = 0", (row_id,))


def save(conn: sqlite3.Connection, project: str, path: str, fields: dict[str, object]) -> None:
    """Insert or replace one file's row (`fields`: name, description, type, body, size, mtime_ns, hash,
    problem, binary) and its full-text entry (none for a binary file)."""
    with transaction(conn):
        row = conn.execute("SELECT id FROM auto_memory WHERE project = ? AND path = ?", (project, path)).fetchone()
        values = (fields["name"], fields["description"], fields["type"], fields["body"], fields["size"],
                  fields["mtime_ns"], fields["hash"], fields["problem"], 1 if fields["binary"] else 0)
        if row is None:
            row_id = conn.execute(
                "INSERT INTO auto_memory (project, path, name, description, type, body, size, mtime_ns, hash, problem,"
                " binary, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " strftime('%Y-%m-%dT%H:%M:%fZ', ? / 1e9, 'unixepoch'))",
                (project, path, *values, fields["mtime_ns"])).lastrowid
        else:
            row_id = row[0]
            _unindex(conn, row_id)
            conn.execute("UPDATE auto_memory SET name = ?, description = ?, type = ?, body = ?, size = ?,"
                         " mtime_ns = ?, hash = ?, problem = ?, binary = ?,"
                         " modified_at = strftime('%Y-%m-%dT%H:%M:%fZ', ? / 1e9, 'unixepoch') WHERE id = ?",
                         (*values, fields["mtime_ns"], row_id))
        conn.execute(_FTS_INSERT + " AND binary = 0", (row_id,))


def touch(conn: sqlite3.Connection, project: str, path: str, size: int, mtime_ns: int) -> None:
    """A file whose stat changed but whose bytes did not: only its stat is updated."""
    conn.execute("UPDATE auto_memory SET size = ?, mtime_ns = ?,"
                 " modified_at = strftime('%Y-%m-%dT%H:%M:%fZ', ? / 1e9, 'unixepoch') WHERE project = ? AND path = ?",
                 (size, mtime_ns, mtime_ns, project, path))


def remove(conn: sqlite3.Connection, project: str, paths: list[str]) -> None:
    """Forget the rows of files that are gone (or are no longer indexed)."""
    with transaction(conn):
        for path in paths:
            row = conn.execute("SELECT id FROM auto_memory WHERE project = ? AND path = ?", (project, path)).fetchone()
            if row is not None:
                _unindex(conn, row[0])
                conn.execute("DELETE FROM auto_memory WHERE id = ?", (row[0],))


def newest_session(conn: sqlite3.Connection) -> int:
    """The id of the newest session (0: none): a new one may be a project to watch."""
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM sessions").fetchone()[0])


def recent_projects(conn: sqlite3.Connection, since: str, cap: int = 50) -> list[str]:
    """The projects with a session active since `since` (store format), most recent first."""
    return [row[0] for row in conn.execute(
        "SELECT project FROM sessions WHERE last_activity_at >= ? GROUP BY project ORDER BY MAX(last_activity_at) DESC"
        " LIMIT ?", (since, cap))]


def damaged(conn: sqlite3.Connection, project: str, cap: int = 20) -> list[tuple[str, str]]:
    """(path, what is wrong) of `project`'s text files that were indexed only in part or as plain text."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT path, problem FROM auto_memory WHERE project = ? AND problem != '' AND binary = 0 ORDER BY path"
        " LIMIT ?", (project, cap))]


def forget_project(conn: sqlite3.Connection, project: str) -> None:
    """Remove every note of `project` and its full-text entries, inside the caller's transaction (a project's
    forget); its index is merged so no deleted word stays in an old segment. A store before m019 has none."""
    if not exists(conn):
        return
    for (row_id,) in conn.execute("SELECT id FROM auto_memory WHERE project = ?", (project,)).fetchall():
        _unindex(conn, row_id)
    conn.execute("DELETE FROM auto_memory WHERE project = ?", (project,))
    conn.execute("DELETE FROM auto_memory_dirs WHERE project = ?", (project,))
    conn.execute("INSERT INTO auto_memory_fts (auto_memory_fts) VALUES ('optimize')")


def record_sync(conn: sqlite3.Connection, project: str, report: dict[str, object]) -> None:
    """Keep the last sync of `project`: directory, enabled, files, binary, capped, problems."""
    import json  # off the hook path (it imports `re`)

    conn.execute(
        "INSERT INTO auto_memory_dirs (project, directory, enabled, files, binary, capped, problems, synced_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT (project) DO UPDATE SET"
        " directory = excluded.directory, enabled = excluded.enabled, files = excluded.files,"
        " binary = excluded.binary, capped = excluded.capped, problems = excluded.problems,"
        " synced_at = excluded.synced_at",
        (project, report["directory"], 1 if report["enabled"] else 0, report["files"], report["binary"],
         report["capped"], json.dumps(report["problems"])))


def last_sync(conn: sqlite3.Connection, project: str) -> dict[str, object] | None:
    """The last sync of `project` ({directory, enabled, files, binary, capped, problems, synced_at}), or None."""
    import json

    if not exists(conn):
        return None
    row = conn.execute("SELECT directory, enabled, files, binary, capped, problems, synced_at FROM auto_memory_dirs"
                       " WHERE project = ?", (project,)).fetchone()
    if row is None:
        return None
    return {"directory": row[0], "enabled": bool(row[1]), "files": row[2], "binary": row[3], "capped": row[4],
            "problems": json.loads(row[5] or "[]"), "synced_at": row[6]}


def counts(conn: sqlite3.Connection, project: str | None = None) -> int:
    """Text files indexed (of `project`, else of every project)."""
    if not exists(conn):
        return 0
    if project is None:
        return int(conn.execute("SELECT COUNT(*) FROM auto_memory WHERE binary = 0").fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM auto_memory WHERE project = ? AND binary = 0",
                            (project,)).fetchone()[0])


def index_text(conn: sqlite3.Connection, project: str) -> str | None:
    """The stored text of `project`'s `MEMORY.md` while its last sync found auto memory on (None when it has
    none, it is off, or the store predates m019). Two index seeks: the session-start hook reads it."""
    try:
        row = conn.execute("SELECT a.body FROM auto_memory a JOIN auto_memory_dirs d ON d.project = a.project"
                           " WHERE a.project = ? AND a.path = 'MEMORY.md' AND d.enabled = 1", (project,)).fetchone()
    except sqlite3.OperationalError:  # a read-only store from before m019
        return None
    return None if row is None else str(row[0])


def note(conn: sqlite3.Connection, path: str, project: str | None) -> list[dict[str, object]]:
    """The rows of the file `path` (of `project`, else of any project), in full."""
    where, args = ("path = ? AND binary = 0", [path]) if project is None else (
        "path = ? AND project = ? AND binary = 0", [path, project])
    cursor = conn.execute("SELECT id, project, path, name, description, type, body, size, problem, modified_at"
                          f" FROM auto_memory WHERE {where} ORDER BY project", args)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


_HIT_SELECT = (
    "SELECT 'auto-memory' AS kind, a.id AS id, 'auto-memory:' || a.path AS ref, a.modified_at AS created_at,"
    " a.project AS project, CASE WHEN a.type = '' THEN 'note' ELSE a.type END AS type,"
    # a name of words is the title; a slug name (`flaky_login`: what Claude Code 2.1.332 writes) gives way to
    # the description, the note's one line for a reader, and becomes the subtitle
    " CASE WHEN a.description != '' AND instr(trim(a.name), ' ') = 0 THEN a.description"
    " WHEN a.name = '' THEN a.path ELSE a.name END AS title,"
    " CASE WHEN a.description != '' AND instr(trim(a.name), ' ') = 0 THEN NULLIF(a.name, '')"
    " ELSE NULLIF(a.description, '') END AS subtitle,"
    " substr(a.body, 1, 160) AS snippet, {score} AS score, NULL AS session_id, a.path AS path"
)


def note_hits(conn: sqlite3.Connection, expression: str, project: str | None, since: str | None, until: str | None,
              want: int, snippets: bool = False) -> tuple[int, list[dict[str, object]]]:
    """(how many notes match `expression`, the best `want` of them by BM25: lower is better)."""
    if not exists(conn):
        return 0, []
    where, args = ["auto_memory_fts MATCH ?"], [expression]
    for column, op, value in (("a.project", "=", project), ("a.modified_at", ">=", since),
                              ("a.modified_at", "<", until)):
        if value:
            where.append(f"{column} {op} ?")
            args.append(value)
    source = " FROM auto_memory_fts JOIN auto_memory a ON a.id = auto_memory_fts.rowid WHERE " + " AND ".join(where)
    total = int(conn.execute("SELECT COUNT(*)" + source, args).fetchone()[0])
    score = f"bm25(auto_memory_fts, {NOTE_WEIGHTS})"
    select = _HIT_SELECT.format(score=score)
    if snippets:
        select = select.replace("substr(a.body, 1, 160) AS snippet",
                                "snippet(auto_memory_fts, 2, '[', ']', '…', 12) AS snippet")
    cursor = conn.execute(select + source + " ORDER BY score, a.modified_at DESC LIMIT ?", (*args, want))
    names = [column[0] for column in cursor.description]
    return total, [dict(zip(names, row)) for row in cursor]
