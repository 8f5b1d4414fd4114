"""Migration m018 (issue 30): what memory a session was given, what it used, and what the observer spent.

- `shown` (m004, the set of observations a session was given, so per-prompt memory never repeats them)
  keeps its history: `via` (`index` at session start, `prompt` beside a prompt), `at` (when first
  shown) and `current` (0 once a later full index replaced the session's view, after /clear or a
  compaction: per-prompt memory may show the row again, and the statistics still count it as shown).
- `injections`: one row each time memory went into a session's context (the session-start index, a
  prompt's added memories), with how many observations and how many tokens (chars/4) it cost.
- `used`: which observations a session used, and how: `fetched` (get_observations, the timeline's
  anchor, `claude-mem show`), `searched` (returned by a search the session ran), `cited` (named by id or
  title in a reply or a tool input). Derived by the worker from the captured events
  (`recall.use.derive`), never on a hook's path.
- `observer_spend`: the observer's tokens per UTC day, provider and session, and the batches handled
  offline because a token budget was spent; a forgotten session's spend still counts for its day (no
  foreign key). Filled from the tokens the observations and summaries already carry.
"""

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script


def m018_memory_in_use(conn: sqlite3.Connection) -> None:
    """See the module docstring."""
    run_script(conn, """
        ALTER TABLE shown ADD COLUMN via TEXT CHECK (via IN ('index', 'prompt'));
        ALTER TABLE shown ADD COLUMN at TEXT;
        ALTER TABLE shown ADD COLUMN current INTEGER NOT NULL DEFAULT 1;
        UPDATE shown SET at = (SELECT coalesce(s.last_injected_at, s.started_at) FROM sessions s
                               WHERE s.id = shown.session_id);
        CREATE INDEX shown_at ON shown (at);

        CREATE TABLE injections (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            via TEXT NOT NULL CHECK (via IN ('index', 'prompt')),
            observations INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE INDEX injections_at ON injections (at);
        CREATE INDEX injections_session ON injections (session_id);

        CREATE TABLE used (
            session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            observation_id INTEGER NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
            how TEXT NOT NULL CHECK (how IN ('fetched', 'searched', 'cited')),
            times INTEGER NOT NULL DEFAULT 1,
            at TEXT NOT NULL,
            last_at TEXT NOT NULL,
            PRIMARY KEY (session_id, observation_id, how)
        ) WITHOUT ROWID;
        CREATE INDEX used_observation ON used (observation_id);
        CREATE INDEX used_at ON used (at);

        CREATE TABLE observer_spend (
            day TEXT NOT NULL,
            provider TEXT NOT NULL,
            session_id INTEGER NOT NULL,
            requests INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            over_budget INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (day, provider, session_id)
        ) WITHOUT ROWID;
        CREATE INDEX observer_spend_session ON observer_spend (session_id);
        INSERT INTO observer_spend (day, provider, session_id, requests, input_tokens, output_tokens)
            SELECT substr(t.created_at, 1, 10), coalesce(s.observer_provider, 'unknown'), t.session_id,
                   COUNT(*), SUM(t.input_tokens), SUM(t.output_tokens)
            FROM (SELECT session_id, created_at, input_tokens, output_tokens FROM observations
                  WHERE session_id IS NOT NULL AND input_tokens + output_tokens > 0
                  UNION
                  SELECT session_id, created_at, input_tokens, output_tokens FROM summaries
                  WHERE input_tokens + output_tokens > 0) t
            LEFT JOIN sessions s ON s.id = t.session_id
            GROUP BY 1, 2, 3;
    """)
