"""Migration m019 (issue 30): Claude Code's auto memory, indexed read-only as the source `auto-memory`.

`auto_memory` holds one row per file of a project's memory directory (path relative to it): the
fields of its front matter, its body (secrets redacted, cut past 256 KB), and its size, mtime and
hash, so a sync reads only the files whose stat changed. A binary file has a row (`binary` 1, no
text) so it is not read again until it changes; it is not in the full-text index. `auto_memory_fts` indexes name, description
and body through the view `auto_memory_search`, whose empty `context` column lets the expressions
built for the other indexes (a phrase matches a row's own text: `- {context} : "…"`) run here too.
No trigger keeps it current: the one writer (`store.auto_memory`) updates both in one transaction,
and every connection (each hook's) parses a shorter schema. `auto_memory_dirs` keeps the last sync of
each project: the directory, whether auto memory is on, how many files were left out and why.
"""

from __future__ import annotations

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script


def m019_auto_memory(conn: sqlite3.Connection) -> None:
    """Claude Code's auto memory files, their full-text index and each project's last sync."""
    run_script(
        conn,
        """
        CREATE TABLE auto_memory (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project TEXT NOT NULL,
            path TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            description TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL DEFAULT '',
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT NOT NULL,
            problem TEXT NOT NULL DEFAULT '',
            binary INTEGER NOT NULL DEFAULT 0,
            modified_at TEXT NOT NULL,
            UNIQUE (project, path)
        );
        CREATE VIEW auto_memory_search AS
            SELECT id, name, description, body, '' AS context FROM auto_memory;
        CREATE VIRTUAL TABLE auto_memory_fts USING fts5(
            name, description, body, context, content='auto_memory_search', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE auto_memory_dirs (
            project TEXT PRIMARY KEY,
            directory TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            files INTEGER NOT NULL DEFAULT 0,
            binary INTEGER NOT NULL DEFAULT 0,
            capped INTEGER NOT NULL DEFAULT 0,
            problems TEXT NOT NULL DEFAULT '[]',
            synced_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        """,
    )
