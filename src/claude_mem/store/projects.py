"""The projects repository: which project key a checkout belongs to, the list, and merging two.

A checkout is known by its root path and its repository's normalised remote (`claude_mem.project`).
The key stays the first one known: a checkout of the same remote at another path (moved, re-cloned)
resolves to it, as does a path or remote that `merge` aliased. Resolution is one indexed query, run
by the hooks when a session starts. Stdlib only: the hooks import it.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # `sqlite3`'s own driver, without the `datetime` its wrapper imports (db.py)

from claude_mem import project as identity
from claude_mem.store.transaction import transaction

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any


# Best match first: an alias of this path, this path as a known project (every key with rows is one:
# m015), an alias of the remote, the first-seen project with this remote. (Rank 2, a key with rows but
# no project record, is gone with m015.)
_LOOKUP = """
SELECT project, rank, remote FROM (
    SELECT project, 0 AS rank, NULL AS remote FROM project_aliases WHERE alias = :root
    UNION ALL SELECT key, 1, remote FROM projects WHERE key = :root
    UNION ALL SELECT project, 3, NULL FROM project_aliases WHERE alias = :remote
    UNION ALL SELECT key, 4, NULL FROM (SELECT key FROM projects WHERE remote = :remote ORDER BY first_seen, key LIMIT 1)
) ORDER BY rank LIMIT 1
"""


def lookup(conn: sqlite3.Connection, root: str, remote: str | None) -> tuple[str, int, str | None] | None:
    """(project key, how it matched (0, 1, 3 or 4, see `_LOOKUP`), its recorded remote) or None when unknown."""
    row = conn.execute(_LOOKUP, {"root": root, "remote": remote}).fetchone()
    return (str(row[0]), int(row[1]), row[2]) if row else None


def resolve(conn: sqlite3.Connection | None, root: str, remote: str | None) -> str:
    """The project key of a checkout, without writing; `root` itself when nothing is known (or the
    database predates project records)."""
    if conn is None:
        return root
    try:
        found = lookup(conn, root, remote)
    except sqlite3.Error:
        return root
    return found[0] if found else root


def project_here(conn: sqlite3.Connection | None, cwd: str | None, env: dict[str, str] | None = None) -> str:
    """The project of a working directory (`CLAUDE_PROJECT_DIR` first, as for hooks): the one function
    every surface asks (hooks, CLI defaults, MCP server, statusline, per-prompt memory)."""
    root, remote = identity.identity(cwd, env)
    return resolve(conn, root, remote)


def project_of_path(conn: sqlite3.Connection | None, path: str) -> str:
    """The project of a path the user typed (no `CLAUDE_PROJECT_DIR`)."""
    root, git_dir = identity.locate(path)
    return resolve(conn, root, identity.remote_of(git_dir))


def register(conn: sqlite3.Connection, root: str, remote: str | None, at: str) -> str:
    """The project key for a new session at `root`, recorded: a new project, a remote learnt for a
    known one, or the path of a moved checkout aliased to the key it resolved to. Inside the caller's
    transaction; writes nothing in the common case (a known project with its remote)."""
    found = lookup(conn, root, remote)
    if found is None:
        conn.execute("INSERT INTO projects (key, remote, first_seen) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                     (root, remote, at))
        return root
    key, rank, known_remote = found
    if rank == 1 and remote and known_remote is None:
        conn.execute("UPDATE projects SET remote = ? WHERE key = ? AND remote IS NULL", (remote, key))
    elif rank in (3, 4) and key != root:
        conn.execute("INSERT INTO project_aliases (alias, project, created_at) VALUES (?, ?, ?)"
                     " ON CONFLICT (alias) DO NOTHING", (root, key, at))
    return key


def register_here(conn: sqlite3.Connection, cwd: str | None, env: dict[str, str] | None = None) -> str:
    """`project_here`, recorded as a session start records it (`register`, in its own transaction): the
    one write path for a note made outside a session (`remember`), so that the note's checkout and its
    remote are known before any session and a second checkout of the same remote joins it."""
    root, remote = identity.identity(cwd, env)
    return _register_now(conn, root, remote)


def register_path(conn: sqlite3.Connection, path: str) -> str:
    """`project_of_path`, recorded (see `register_here`)."""
    root, git_dir = identity.locate(path)
    return _register_now(conn, root, identity.remote_of(git_dir))


def _register_now(conn: sqlite3.Connection, root: str, remote: str | None) -> str:
    with transaction(conn):
        at = conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')").fetchone()[0]
        return register(conn, root, remote, str(at))


# The catalog (m015) with its counts; the latest activity through the per-project indexes.
_LISTING = """
SELECT p.key, p.remote, p.first_seen, p.sessions, p.observations, p.summaries,
    max(coalesce((SELECT MAX(last_activity_at) FROM sessions WHERE project = p.key), ''),
        coalesce((SELECT MAX(created_at) FROM observations WHERE project = p.key), ''))
FROM projects p ORDER BY p.key
"""


def listing(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project: key, remote, first_seen, sessions, observations, summaries, last_activity, aliases."""
    aliases: dict[str, list[str]] = {}
    for alias, key in conn.execute("SELECT alias, project FROM project_aliases ORDER BY alias"):
        aliases.setdefault(key, []).append(alias)
    return [
        {"key": key, "remote": remote, "first_seen": first_seen, "sessions": sessions, "observations": observations,
         "summaries": summaries, "last_activity": last or None, "aliases": aliases.get(key, [])}
        for key, remote, first_seen, sessions, observations, summaries, last in conn.execute(_LISTING)
    ]


def merge_counts(conn: sqlite3.Connection, key: str) -> dict[str, int]:
    """What `merge` would move out of project `key`, by kind of row."""
    row = conn.execute(
        "SELECT (SELECT COUNT(*) FROM sessions WHERE project = :key),"
        " (SELECT COUNT(*) FROM prompts WHERE session_id IN (SELECT id FROM sessions WHERE project = :key)),"
        " (SELECT COUNT(*) FROM pending_events WHERE session_id IN (SELECT id FROM sessions WHERE project = :key)),"
        " (SELECT COUNT(*) FROM observations WHERE project = :key),"
        " (SELECT COUNT(*) FROM summaries WHERE project = :key)",
        {"key": key},
    ).fetchone()
    return dict(zip(("sessions", "prompts", "events", "observations", "summaries"), (int(n) for n in row)))


def merge(conn: sqlite3.Connection, source: str, target: str, at: str) -> None:
    """Make project `source` part of `target`, inside the caller's transaction: its sessions (with their
    prompts and events), observations and summaries take `target`'s key (the search indexes and vectors
    hold no project, so nothing else moves), and its path, its remote and its aliases resolve to
    `target` from now on."""
    names = {"source": source, "target": target, "at": at}
    conn.execute("UPDATE sessions SET project = :target WHERE project = :source", names)
    conn.execute("UPDATE observations SET project = :target WHERE project = :source", names)
    conn.execute("UPDATE summaries SET project = :target WHERE project = :source", names)
    conn.execute(
        "INSERT INTO project_aliases (alias, project, created_at)"
        " SELECT remote, :target, :at FROM projects WHERE key = :source AND remote IS NOT NULL"
        " AND remote IS NOT (SELECT remote FROM projects WHERE key = :target)"
        " ON CONFLICT (alias) DO UPDATE SET project = excluded.project", names)
    conn.execute(
        "INSERT INTO projects (key, remote, first_seen) SELECT :target, remote, first_seen FROM projects WHERE key = :source"
        " ON CONFLICT (key) DO UPDATE SET remote = coalesce(projects.remote, excluded.remote),"
        " first_seen = min(projects.first_seen, excluded.first_seen)", names)
    conn.execute("INSERT INTO projects (key, first_seen) VALUES (:target, :at) ON CONFLICT (key) DO NOTHING", names)
    conn.execute("UPDATE project_aliases SET project = :target WHERE project = :source", names)
    conn.execute("INSERT INTO project_aliases (alias, project, created_at) VALUES (:source, :target, :at)"
                 " ON CONFLICT (alias) DO UPDATE SET project = excluded.project", names)
    conn.execute("DELETE FROM project_aliases WHERE alias = :target", names)
    conn.execute("DELETE FROM projects WHERE key = :source", names)
