"""The projects repository: which project key a checkout belongs to, the list, and merging two.

A checkout is known by its root path and its repository's normalised remote (`claude_mem.project`).
The key stays the first one known: a checkout of the same remote at another path (moved, re-cloned)
resolves to it, as does a path or remote that `merge` aliased. Resolution is one indexed query, run
by the hooks when a session starts. Stdlib only: the hooks import it.
"""

import sqlite3

from claude_mem import project as identity

# Best match first: an alias of this path, this path as a known project (or one with sessions from
# before projects were recorded), an alias of the remote, the first-seen project with this remote.
_LOOKUP = """
SELECT project, rank, remote FROM (
    SELECT project, 0 AS rank, NULL AS remote FROM project_aliases WHERE alias = :root
    UNION ALL SELECT key, 1, remote FROM projects WHERE key = :root
    UNION ALL SELECT project, 2, NULL FROM (SELECT project FROM sessions WHERE project = :root LIMIT 1)
    UNION ALL SELECT project, 3, NULL FROM project_aliases WHERE alias = :remote
    UNION ALL SELECT key, 4, NULL FROM (SELECT key FROM projects WHERE remote = :remote ORDER BY first_seen, key LIMIT 1)
) ORDER BY rank LIMIT 1
"""


def lookup(conn: sqlite3.Connection, root: str, remote: str | None) -> tuple[str, int, str | None] | None:
    """(project key, how it matched (0-4, see `_LOOKUP`), its recorded remote) or None when unknown."""
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


def project_here(conn: sqlite3.Connection | None, cwd: str | None, env: dict | None = None) -> str:
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
    elif rank == 2:
        conn.execute("INSERT INTO projects (key, remote, first_seen) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                     (key, remote, at))
    elif rank in (3, 4) and key != root:
        conn.execute("INSERT INTO project_aliases (alias, project, created_at) VALUES (?, ?, ?)"
                     " ON CONFLICT (alias) DO NOTHING", (root, key, at))
    return key
