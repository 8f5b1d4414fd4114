"""Schema migrations: an ordered list of small named functions, each applied once in a transaction.

`schema_migrations` records what ran; `PRAGMA user_version` mirrors the count so that `connect()`
can tell an up-to-date database with a single PRAGMA. Each migration is literal SQL: it never
builds statements from constants other modules import, so editing such a constant cannot rewrite
a released migration. Never edit a released migration: add one.
"""

import _sqlite3 as sqlite3  # `sqlite3`'s own driver, without the `datetime` its wrapper imports (db.py)

from claude_mem.store.auto_memory_schema import m019_auto_memory
from claude_mem.store.context_schema import m017_search_context
from claude_mem.store.failure_schema import m020_failures
from claude_mem.store.retry_schema import m021_failure_class
from claude_mem.store.sql_script import run_script
from claude_mem.store.transaction import transaction
from claude_mem.store.use_schema import m018_memory_in_use
from claude_mem.store.vector_schema import m016_compact_vectors

# The own columns of each full-text index (m002; m017 adds `context` after them), read by `forget` to
# optimise every index; describes, never builds, a migration.
FTS_COLUMNS: dict[str, tuple[str, ...]] = {
    "observations": ("title", "subtitle", "narrative", "facts", "concepts"),
    "summaries": ("request", "investigated", "learned", "completed", "next_steps", "notes"),
    "prompts": ("text",),
}


def m001_initial(conn: sqlite3.Connection) -> None:
    """Capture tables (written by hooks) and derived tables (written by the worker)."""
    run_script(
        conn,
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            content_session_id TEXT NOT NULL UNIQUE,
            project TEXT NOT NULL,
            cwd TEXT,
            title TEXT,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'completed', 'failed', 'interrupted')),
            observer_provider TEXT,
            memory_session_id TEXT,
            last_injected_at TEXT,
            started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            ended_at TEXT,
            last_activity_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX sessions_project ON sessions (project, started_at);

        CREATE TABLE prompts (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            prompt_number INTEGER NOT NULL,
            text TEXT NOT NULL,
            private INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (session_id, prompt_number)
        );

        CREATE TABLE pending_events (
            id INTEGER PRIMARY KEY,
            event_key TEXT NOT NULL UNIQUE,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            kind TEXT NOT NULL
                CHECK (kind IN ('prompt', 'tool', 'tool_failure', 'summarize', 'session_end')),
            prompt_number INTEGER,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            lease_until TEXT,
            next_attempt_at TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            processed_at TEXT
        );
        CREATE INDEX pending_events_queue ON pending_events (status, session_id, id);

        CREATE TABLE observations (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
            project TEXT NOT NULL,
            type TEXT NOT NULL CHECK (type IN ('bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision')),
            title TEXT NOT NULL,
            subtitle TEXT,
            narrative TEXT NOT NULL,
            facts TEXT NOT NULL DEFAULT '[]',
            concepts TEXT NOT NULL DEFAULT '[]',
            files_read TEXT NOT NULL DEFAULT '[]',
            files_modified TEXT NOT NULL DEFAULT '[]',
            prompt_number INTEGER,
            content_hash TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            fetch_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (session_id, content_hash)
        );
        CREATE INDEX observations_project ON observations (project, created_at);

        CREATE TABLE observation_sources (
            observation_id INTEGER NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
            event_id INTEGER NOT NULL REFERENCES pending_events (id) ON DELETE CASCADE,
            PRIMARY KEY (observation_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX observation_sources_event ON observation_sources (event_id);

        CREATE TABLE summaries (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            project TEXT NOT NULL,
            event_id INTEGER UNIQUE REFERENCES pending_events (id) ON DELETE SET NULL,
            prompt_number INTEGER,
            request TEXT NOT NULL DEFAULT '',
            investigated TEXT NOT NULL DEFAULT '',
            learned TEXT NOT NULL DEFAULT '',
            completed TEXT NOT NULL DEFAULT '',
            next_steps TEXT NOT NULL DEFAULT '',
            files_read TEXT NOT NULL DEFAULT '[]',
            files_edited TEXT NOT NULL DEFAULT '[]',
            notes TEXT NOT NULL DEFAULT '',
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX summaries_project ON summaries (project, created_at);
        """,
    )


def m002_fts(conn: sqlite3.Connection) -> None:
    """Full-text search (FTS5, external content kept in sync by triggers) over observations,
    summaries and prompts."""
    run_script(
        conn,
        """
        CREATE VIRTUAL TABLE observations_fts USING fts5(
            title, subtitle, narrative, facts, concepts, content='observations', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
            INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
        END;
        CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations WHEN old.uid IS NOT NULL BEGIN
            INSERT INTO observations_fts (observations_fts, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
        END;
        CREATE TRIGGER observations_fts_update AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON observations BEGIN
            INSERT INTO observations_fts (observations_fts, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
            INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
        END;
        INSERT INTO observations_fts (observations_fts) VALUES ('rebuild');

        CREATE VIRTUAL TABLE summaries_fts USING fts5(
            request, investigated, learned, completed, next_steps, notes, content='summaries', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
            INSERT INTO summaries_fts (rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
        END;
        CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries WHEN old.uid IS NOT NULL BEGIN
            INSERT INTO summaries_fts (summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
        END;
        CREATE TRIGGER summaries_fts_update AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON summaries BEGIN
            INSERT INTO summaries_fts (summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
            INSERT INTO summaries_fts (rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
        END;
        INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild');

        CREATE VIRTUAL TABLE prompts_fts USING fts5(
            text, content='prompts', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER prompts_fts_insert AFTER INSERT ON prompts BEGIN
            INSERT INTO prompts_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER prompts_fts_delete AFTER DELETE ON prompts WHEN old.uid IS NOT NULL BEGIN
            INSERT INTO prompts_fts (prompts_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER prompts_fts_update AFTER UPDATE OF text ON prompts BEGIN
            INSERT INTO prompts_fts (prompts_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO prompts_fts (rowid, text) VALUES (new.id, new.text);
        END;
        INSERT INTO prompts_fts (prompts_fts) VALUES ('rebuild');

        """,
    )


def m003_vectors(conn: sqlite3.Connection) -> None:
    """Embeddings (derived data, computed by the worker) of observations, summaries and prompts: one
    float32 vector per row and model; deleting a row deletes its vector."""
    run_script(
        conn,
        """
        CREATE TABLE vectors (
            kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary', 'prompt')),
            row_id INTEGER NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (kind, row_id)
        ) WITHOUT ROWID;
        CREATE TRIGGER observations_vector_delete AFTER DELETE ON observations WHEN old.uid IS NOT NULL BEGIN
            DELETE FROM vectors WHERE kind = 'observation' AND row_id = old.id;
        END;
        CREATE TRIGGER summaries_vector_delete AFTER DELETE ON summaries WHEN old.uid IS NOT NULL BEGIN
            DELETE FROM vectors WHERE kind = 'summary' AND row_id = old.id;
        END;
        CREATE TRIGGER prompts_vector_delete AFTER DELETE ON prompts WHEN old.uid IS NOT NULL BEGIN
            DELETE FROM vectors WHERE kind = 'prompt' AND row_id = old.id;
        END;
        CREATE TRIGGER observations_vector_update AFTER UPDATE OF title, subtitle, narrative ON observations BEGIN
            DELETE FROM vectors WHERE kind = 'observation' AND row_id = old.id;
        END;
        """,
    )


def m004_shown(conn: sqlite3.Connection) -> None:
    """Which observations a session has been shown (its context index and the memories added to its
    prompts), so that per-prompt memory never repeats them; gone with the session or the observation."""
    run_script(
        conn,
        """
        CREATE TABLE shown (
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
            PRIMARY KEY (session_id, observation_id)
        ) WITHOUT ROWID;
        CREATE INDEX shown_observation ON shown (observation_id);
        """,
    )


def m005_vector_generation(conn: sqlite3.Connection) -> None:
    """A counter that moves whenever a vector is added or removed, so that a process can keep the
    vectors in memory and know, with one read, when they went stale."""
    run_script(
        conn,
        """
        CREATE TABLE vector_generation (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            generation INTEGER NOT NULL
        );
        INSERT INTO vector_generation (id, generation) VALUES (1, 0);
        CREATE TRIGGER vectors_generation_insert AFTER INSERT ON vectors BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
        END;
        CREATE TRIGGER vectors_generation_delete AFTER DELETE ON vectors BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
        END;
        """,
    )


def m006_uids(conn: sqlite3.Connection) -> None:
    """A global id (`uid`, 32 lowercase hex characters) for every session, prompt, observation and
    summary: the same in every copy of a row (export, import, replication; DESIGN §12), where the
    integer `id` is only this database's. Existing rows get one now; a row inserted without one gets
    one from a trigger, whatever wrote it; importers set theirs explicitly."""
    run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN uid TEXT;
        ALTER TABLE prompts ADD COLUMN uid TEXT;
        ALTER TABLE observations ADD COLUMN uid TEXT;
        ALTER TABLE summaries ADD COLUMN uid TEXT;
        UPDATE sessions SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        UPDATE prompts SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        UPDATE observations SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        UPDATE summaries SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
        CREATE UNIQUE INDEX sessions_uid ON sessions (uid);
        CREATE UNIQUE INDEX prompts_uid ON prompts (uid);
        CREATE UNIQUE INDEX observations_uid ON observations (uid);
        CREATE UNIQUE INDEX summaries_uid ON summaries (uid);
        CREATE TRIGGER sessions_uid_insert AFTER INSERT ON sessions WHEN new.uid IS NULL BEGIN
            UPDATE sessions SET uid = lower(hex(randomblob(16))) WHERE id = new.id;
        END;
        CREATE TRIGGER prompts_uid_insert AFTER INSERT ON prompts WHEN new.uid IS NULL BEGIN
            UPDATE prompts SET uid = lower(hex(randomblob(16))) WHERE id = new.id;
        END;
        CREATE TRIGGER observations_uid_insert AFTER INSERT ON observations WHEN new.uid IS NULL BEGIN
            UPDATE observations SET uid = lower(hex(randomblob(16))) WHERE id = new.id;
        END;
        CREATE TRIGGER summaries_uid_insert AFTER INSERT ON summaries WHEN new.uid IS NULL BEGIN
            UPDATE summaries SET uid = lower(hex(randomblob(16))) WHERE id = new.id;
        END;
        """,
    )


def m007_projects(conn: sqlite3.Connection) -> None:
    """Project identity beyond a path: each project key with the normalised remote URL of its
    repository (a checkout of the same remote elsewhere resolves to the first-known key) and when it
    was first seen; aliases send a checkout path or a remote to another project (a moved checkout,
    `projects merge`). Every key already stored becomes a project, first seen at its oldest row; its
    remote is filled in the next time a session starts there."""
    run_script(
        conn,
        """
        CREATE TABLE projects (
            key TEXT PRIMARY KEY,
            remote TEXT,
            first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        ) WITHOUT ROWID;
        CREATE INDEX projects_remote ON projects (remote, first_seen);
        CREATE TABLE project_aliases (
            alias TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        ) WITHOUT ROWID;
        INSERT INTO projects (key, first_seen)
            SELECT project, MIN(at) FROM (
                SELECT project, started_at AS at FROM sessions
                UNION ALL SELECT project, created_at FROM observations
                UNION ALL SELECT project, created_at FROM summaries
            ) GROUP BY project;
        """,
    )


def m008_team(conn: sqlite3.Connection) -> None:
    """Team memory (DESIGN §12). Each shared table gets `author` and `device` (NULL on this machine's
    own rows, set on rows pulled from the team server) and `team_rev` (the server's revision: NULL
    while a row of this machine is not pushed yet; a session that changes after its push goes back
    to NULL). Every deleted row leaves a tombstone (its uid: forget is rare, and a row pushed just before
    its deletion must not outlive it on the server), which the team service pushes to the server, so
    every machine deletes it too, and then drops; `team_state` holds the cursors and counters."""
    run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN author TEXT;
        ALTER TABLE sessions ADD COLUMN device TEXT;
        ALTER TABLE sessions ADD COLUMN team_rev INTEGER;
        ALTER TABLE prompts ADD COLUMN author TEXT;
        ALTER TABLE prompts ADD COLUMN device TEXT;
        ALTER TABLE prompts ADD COLUMN team_rev INTEGER;
        ALTER TABLE observations ADD COLUMN author TEXT;
        ALTER TABLE observations ADD COLUMN device TEXT;
        ALTER TABLE observations ADD COLUMN team_rev INTEGER;
        ALTER TABLE summaries ADD COLUMN author TEXT;
        ALTER TABLE summaries ADD COLUMN device TEXT;
        ALTER TABLE summaries ADD COLUMN team_rev INTEGER;
        CREATE INDEX sessions_unpushed ON sessions (project, id) WHERE team_rev IS NULL;
        CREATE INDEX observations_unpushed ON observations (project, id) WHERE team_rev IS NULL;
        CREATE INDEX summaries_unpushed ON summaries (project, id) WHERE team_rev IS NULL;
        CREATE INDEX prompts_unpushed ON prompts (session_id, id) WHERE team_rev IS NULL;
        CREATE TABLE team_tombstones (
            uid TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            project TEXT NOT NULL,
            deleted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        ) WITHOUT ROWID;
        CREATE TABLE team_state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TRIGGER sessions_team_tombstone AFTER DELETE ON sessions WHEN old.uid IS NOT NULL BEGIN
            INSERT OR REPLACE INTO team_tombstones (uid, kind, project) VALUES (old.uid, 'session', old.project);
        END;
        CREATE TRIGGER observations_team_tombstone AFTER DELETE ON observations WHEN old.uid IS NOT NULL BEGIN
            INSERT OR REPLACE INTO team_tombstones (uid, kind, project) VALUES (old.uid, 'observation', old.project);
        END;
        CREATE TRIGGER summaries_team_tombstone AFTER DELETE ON summaries WHEN old.uid IS NOT NULL BEGIN
            INSERT OR REPLACE INTO team_tombstones (uid, kind, project) VALUES (old.uid, 'summary', old.project);
        END;
        CREATE TRIGGER prompts_team_tombstone AFTER DELETE ON prompts WHEN old.uid IS NOT NULL BEGIN
            INSERT OR REPLACE INTO team_tombstones (uid, kind, project)
            VALUES (old.uid, 'prompt', coalesce((SELECT project FROM sessions WHERE id = old.session_id), ''));
        END;
        CREATE TRIGGER sessions_team_changed AFTER UPDATE OF title, status, ended_at ON sessions
            WHEN old.team_rev IS NOT NULL AND old.device IS NULL BEGIN
            UPDATE sessions SET team_rev = NULL WHERE id = new.id;
        END;
        """,
    )


def m009_caught_late(conn: sqlite3.Connection) -> None:
    """Secrets caught late (`store.caught_late`): named counters, the first counting the rows the
    worker's second redaction pass had to change, and the latest of those catches — when, which row,
    of what kind; never its text."""
    run_script(
        conn,
        """
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('secrets_caught_late', 0);
        CREATE TABLE late_catches (
            id INTEGER PRIMARY KEY,
            caught_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            row_kind TEXT NOT NULL CHECK (row_kind IN ('event', 'prompt', 'observation', 'summary')),
            row_id INTEGER,
            detail TEXT NOT NULL DEFAULT ''
        );
        """,
    )


def m010_changes(conn: sqlite3.Connection) -> None:
    """A log of what changed in memory, whoever wrote it (a hook, the CLI, an import, the worker, team
    replication): triggers append one entry per observation, summary or prompt added, changed (its text,
    type or project; not its fetch count or replication state) or deleted, and per session deleted
    (with its Claude Code id, since the row is gone when the entry is read). The worker reads it to
    tell open viewers (`store.changes`). It bounds itself: every 1000th entry drops those more than
    10000 entries old, never the newest, so sequence numbers only grow (and the hook path pays one
    small insert per prompt, not an `AUTOINCREMENT` counter as well)."""
    run_script(
        conn,
        """
        CREATE TABLE changes (
            seq INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary', 'prompt', 'session')),
            op TEXT NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
            row_id INTEGER NOT NULL,
            session TEXT
        );
        CREATE TRIGGER changes_bounded AFTER INSERT ON changes WHEN new.seq % 1000 = 0 BEGIN
            DELETE FROM changes WHERE seq <= new.seq - 10000;
        END;
        CREATE TRIGGER observations_change_insert AFTER INSERT ON observations BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('observation', 'insert', new.id);
        END;
        CREATE TRIGGER observations_change_update AFTER UPDATE OF project, type, title, subtitle, narrative, facts, concepts, files_read, files_modified ON observations BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('observation', 'update', new.id);
        END;
        CREATE TRIGGER observations_change_delete AFTER DELETE ON observations BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('observation', 'delete', old.id);
        END;
        CREATE TRIGGER summaries_change_insert AFTER INSERT ON summaries BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('summary', 'insert', new.id);
        END;
        CREATE TRIGGER summaries_change_update AFTER UPDATE OF project, request, investigated, learned, completed, next_steps, files_read, files_edited, notes ON summaries BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('summary', 'update', new.id);
        END;
        CREATE TRIGGER summaries_change_delete AFTER DELETE ON summaries BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('summary', 'delete', old.id);
        END;
        CREATE TRIGGER prompts_change_insert AFTER INSERT ON prompts BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('prompt', 'insert', new.id);
        END;
        CREATE TRIGGER prompts_change_update AFTER UPDATE OF text, private ON prompts BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('prompt', 'update', new.id);
        END;
        CREATE TRIGGER prompts_change_delete AFTER DELETE ON prompts BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('prompt', 'delete', old.id);
        END;
        CREATE TRIGGER sessions_change_delete AFTER DELETE ON sessions BEGIN
            INSERT INTO changes (kind, op, row_id, session) VALUES ('session', 'delete', old.id, old.content_session_id);
        END;
        """,
    )


def m011_observation_files(conn: sqlite3.Connection) -> None:
    """The files an observation is about, as they were when it was made (issue 26): path relative to
    the project root, size, mtime, git blob hash (NULL when not hashed: too large, unreadable, gone) and
    the repository's HEAD commit then. Freshness compares them with the working tree at read time."""
    run_script(
        conn,
        """
        CREATE TABLE observation_files (
            observation_id INTEGER NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            size INTEGER,
            mtime_ns INTEGER,
            hash TEXT,
            commit_sha TEXT,
            PRIMARY KEY (observation_id, path)
        ) WITHOUT ROWID;
        """,
    )


# What m012 rebuilds, with the `changes` kind of each (a deleted row's id may be logged only there).
_NEVER_REUSED = (("sessions", "session"), ("prompts", "prompt"), ("observations", "observation"),
                 ("summaries", "summary"))


def m012_ids(conn: sqlite3.Connection) -> None:
    """Ids are never reused (issue 26): `#42` cited by an earlier index, an MCP answer or the model's own
    turn must never come to name another row once 42 is forgotten. Sessions, prompts, observations and
    summaries get `AUTOINCREMENT` by SQLite's table rebuild (new table, copy, drop, rename), keeping
    every id (so the FTS rows, vectors and references stay valid), every uid, index and trigger. The
    table's own stored definition is rebuilt, so whatever columns earlier migrations added come along;
    its sequence starts at the highest id it ever had, a deleted row's id in the change log (or a late
    catch's, or a vector's) included.
    The runner turns foreign keys off around migrations (a DROP would cascade); a rebuild must not add
    a foreign key violation."""
    if conn.execute("PRAGMA foreign_keys").fetchone()[0]:  # a DROP would cascade: refuse, lose nothing
        raise sqlite3.DatabaseError("m012_ids: foreign keys must be off for the table rebuild")
    before = set(conn.execute("PRAGMA foreign_key_check").fetchall())
    conn.execute("PRAGMA legacy_alter_table = ON")  # the rename must not rewrite other tables' triggers
    try:
        for table, kind in _NEVER_REUSED:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
            marker = "id INTEGER PRIMARY KEY,"
            if marker not in sql:
                raise sqlite3.DatabaseError(f"m012_ids: unexpected definition of {table}")
            extras = conn.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL"
                " ORDER BY type = 'trigger', rowid", (table,)
            ).fetchall()
            columns = ", ".join(f'"{row[1]}"' for row in conn.execute(f"PRAGMA table_info({table})"))
            rebuilt = sql.replace(f"CREATE TABLE {table} (", f"CREATE TABLE {table}_m012 (", 1)
            conn.execute(rebuilt.replace(marker, "id INTEGER PRIMARY KEY AUTOINCREMENT,", 1))
            conn.execute(f"INSERT INTO {table}_m012 ({columns}) SELECT {columns} FROM {table} ORDER BY id")
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"ALTER TABLE {table}_m012 RENAME TO {table}")
            for (extra,) in extras:
                conn.execute(extra)
            highest = conn.execute(
                f"SELECT MAX(COALESCE((SELECT MAX(id) FROM {table}), 0),"
                " COALESCE((SELECT MAX(row_id) FROM changes WHERE kind = :kind), 0),"
                " COALESCE((SELECT MAX(row_id) FROM late_catches WHERE row_kind = :kind), 0),"
                " COALESCE((SELECT MAX(row_id) FROM vectors WHERE kind = :kind), 0))", {"kind": kind}
            ).fetchone()[0]
            conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
            conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, highest))
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
    if set(conn.execute("PRAGMA foreign_key_check").fetchall()) - before:
        raise sqlite3.DatabaseError("m012_ids: the rebuild broke a foreign key")



def m013_processed_at(conn: sqlite3.Connection) -> None:
    """Event time, not processing time (issue 26): an observation's or summary's `created_at` is when the
    events it came from happened, and `processed_at` when the observer stored it (NULL when not known:
    a manual note, a teammate's row, one imported from the original claude-mem or an older export). Rows made before took the processing time as
    `created_at`: it moves to `processed_at`, and `created_at` becomes the latest of their events'
    times where those events are still stored (this machine's own rows only; a teammate's keep theirs)."""
    run_script(
        conn,
        """
        ALTER TABLE observations ADD COLUMN processed_at TEXT;
        ALTER TABLE summaries ADD COLUMN processed_at TEXT;
        UPDATE observations SET processed_at = created_at
            WHERE device IS NULL AND EXISTS (SELECT 1 FROM observation_sources WHERE observation_id = observations.id);
        UPDATE observations SET created_at = coalesce((SELECT max(e.created_at) FROM observation_sources s
            JOIN pending_events e ON e.id = s.event_id WHERE s.observation_id = observations.id
            AND e.created_at < observations.created_at), created_at)
            WHERE processed_at IS NOT NULL;
        UPDATE summaries SET processed_at = created_at WHERE device IS NULL AND event_id IS NOT NULL;
        UPDATE summaries SET created_at = coalesce((SELECT e.created_at FROM pending_events e
            WHERE e.id = summaries.event_id AND e.created_at < summaries.created_at), created_at)
            WHERE processed_at IS NOT NULL;
        """,
    )


def m014_supersession(conn: sqlite3.Connection) -> None:
    """A later fact supersedes an earlier one (issue 26): an observation's successor, a local id (it never
    travels), and a change-feed entry when it is set so a viewer card says so at once."""
    run_script(
        conn,
        """
        ALTER TABLE observations ADD COLUMN superseded_by INTEGER REFERENCES observations (id) ON DELETE SET NULL;
        CREATE INDEX observations_superseded_by ON observations (superseded_by) WHERE superseded_by IS NOT NULL;
        CREATE TRIGGER observations_change_supersede AFTER UPDATE OF superseded_by ON observations BEGIN
            INSERT INTO changes (kind, op, row_id) VALUES ('observation', 'update', new.id);
        END;
        """,
    )


def m015_project_counts(conn: sqlite3.Connection) -> None:
    """The projects table becomes the catalog (issue 27): every project key that has a session, an
    observation or a summary is a project, with how many of each it holds, kept by triggers on every
    write path (hooks, observer, `remember`, import, team replication, merge, forget), so listing the
    projects or counting a project's notes reads this table, never the rows. A key keeps its row when
    its last row goes (counts 0), as before. Observations also get an index on when they were stored
    (`coalesce(processed_at, created_at)`), what a resumed session's context asks for.
    The vector generation (m005) moves only with observation vectors, the ones a process keeps in memory:
    the vector of each prompt (the worker embeds every prompt the hook stores) no longer makes the next
    prompt's search reload every observation vector (~150 MB at 100k).
    A later table rebuild that copies these tables with INSERT must reset the counts after the copy."""
    run_script(
        conn,
        """
        ALTER TABLE projects ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE projects ADD COLUMN observations INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE projects ADD COLUMN summaries INTEGER NOT NULL DEFAULT 0;
        INSERT INTO projects (key, first_seen)
            SELECT project, MIN(at) FROM (
                SELECT project, started_at AS at FROM sessions
                UNION ALL SELECT project, created_at FROM observations
                UNION ALL SELECT project, created_at FROM summaries
            ) WHERE true GROUP BY project
            ON CONFLICT (key) DO NOTHING;
        UPDATE projects SET
            sessions = (SELECT COUNT(*) FROM sessions WHERE project = projects.key),
            observations = (SELECT COUNT(*) FROM observations WHERE project = projects.key),
            summaries = (SELECT COUNT(*) FROM summaries WHERE project = projects.key);
        CREATE INDEX observations_project_stored ON observations (project, coalesce(processed_at, created_at));
        DROP TRIGGER vectors_generation_insert;
        DROP TRIGGER vectors_generation_delete;
        CREATE TRIGGER vectors_generation_insert AFTER INSERT ON vectors WHEN new.kind = 'observation' BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
        END;
        CREATE TRIGGER vectors_generation_delete AFTER DELETE ON vectors WHEN old.kind = 'observation' BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
        END;
        """,
    )
    for table, first_seen in (("sessions", "started_at"), ("observations", "created_at"), ("summaries", "created_at")):
        add = (f"INSERT INTO projects (key, first_seen, {table}) VALUES (new.project, new.{first_seen}, 1)"
               f" ON CONFLICT (key) DO UPDATE SET {table} = {table} + 1;")
        remove = f"UPDATE projects SET {table} = {table} - 1 WHERE key = old.project;"
        run_script(conn, f"""
            CREATE TRIGGER {table}_project_insert AFTER INSERT ON {table} BEGIN {add} END;
            CREATE TRIGGER {table}_project_delete AFTER DELETE ON {table} BEGIN {remove} END;
            CREATE TRIGGER {table}_project_move AFTER UPDATE OF project ON {table}
                WHEN old.project IS NOT new.project BEGIN {remove} {add} END;
        """)


MIGRATIONS = [m001_initial, m002_fts, m003_vectors, m004_shown, m005_vector_generation, m006_uids, m007_projects,
              m008_team, m009_caught_late, m010_changes, m011_observation_files, m012_ids, m013_processed_at,
              m014_supersession, m015_project_counts, m016_compact_vectors, m017_search_context,
              m018_memory_in_use, m019_auto_memory, m020_failures, m021_failure_class]
# The one statement of the schema version: `connect()` compares `PRAGMA user_version` with it.
SCHEMA_VERSION = len(MIGRATIONS)


def _ensure_record_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
    )


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations recorded in this database, in order."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]


def migrate(conn: sqlite3.Connection, target: int | None = None) -> list[str]:
    """Apply every missing migration up to `target` (default: all); returns the names applied.

    Each migration runs in its own `BEGIN IMMEDIATE` transaction together with its record row,
    and the version is re-read inside it, so concurrent openers never apply one twice.
    """
    target = len(MIGRATIONS) if target is None else target
    done: list[str] = []
    # A table rebuild (m012) drops a parent table: with foreign keys on, that would cascade. The pragma
    # cannot change inside a transaction, so it is off around them and restored after.
    foreign_keys = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    if not conn.in_transaction:
        conn.execute("PRAGMA foreign_keys = OFF")
    try:
        done = _migrate(conn, target)
    finally:
        if not conn.in_transaction:
            conn.execute(f"PRAGMA foreign_keys = {int(foreign_keys)}")
    return done


def _migrate(conn: sqlite3.Connection, target: int) -> list[str]:
    done: list[str] = []
    for version, migration in enumerate(MIGRATIONS[:target], start=1):
        with transaction(conn):
            _ensure_record_table(conn)
            current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
            if current >= version:
                continue  # another opener applied it meanwhile
            migration(conn)
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, migration.__name__))
            conn.execute(f"PRAGMA user_version = {version}")
        done.append(migration.__name__)
    return done
