"""Migration m020 (issue 31): failures and their fixes, and the notes the hooks added about them.

- `failures`: one row per captured failure (a `tool_failure` event, or a Bash call whose response reports a
  non-zero exit code), written by the hook in its capture transaction (`store.capture`): the session and
  project, the normalized signatures of the command and of the error (`capture.failure_signature`, NULL when
  there is none), the program, short excerpts of the command and the error. `resolved_by` (and `resolved_at`,
  `fix_from`, `fix`) are derived by the worker (`recall.failures`): the later successful Bash call of the same
  command signature in the same project, the last failure before it (the fix is the events between), and a
  one-line "cause → fix". The hook's one lookup is (project, signature): an index each for command and error.
- `failure_notes`: each note a hook added beside a failure (`via` `failure`) or before a retry (`retry`), with
  the earlier failures and the observation ids it named, so "memory in use" can count whether it was followed.
"""

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script


def m020_failures(conn: sqlite3.Connection) -> None:
    """See the module docstring."""
    run_script(conn, """
        CREATE TABLE failures (
            event_id INTEGER PRIMARY KEY REFERENCES pending_events (id) ON DELETE CASCADE,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            project TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            command_sig TEXT,
            error_sig TEXT,
            program TEXT,
            command_text TEXT NOT NULL DEFAULT '',
            error_text TEXT NOT NULL DEFAULT '',
            at TEXT NOT NULL,
            resolved_by INTEGER REFERENCES pending_events (id) ON DELETE SET NULL,
            resolved_at TEXT,
            fix_from INTEGER,
            fix TEXT
        );
        CREATE INDEX failures_command ON failures (project, command_sig, event_id);
        CREATE INDEX failures_error ON failures (project, error_sig, event_id);
        CREATE INDEX failures_resolved_by ON failures (resolved_by);

        CREATE TABLE failure_notes (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            event_id INTEGER REFERENCES pending_events (id) ON DELETE SET NULL,
            via TEXT NOT NULL CHECK (via IN ('failure', 'retry')),
            command_sig TEXT,
            failures TEXT NOT NULL DEFAULT '[]',
            observations TEXT NOT NULL DEFAULT '[]',
            chars INTEGER NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX failure_notes_session ON failure_notes (session_id);
        CREATE INDEX failure_notes_event ON failure_notes (event_id);
        CREATE INDEX failure_notes_at ON failure_notes (at);
    """)
