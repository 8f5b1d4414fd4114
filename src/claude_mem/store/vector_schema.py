"""Migration m016 (issue 28): compact vectors, a queue of rows to embed, a log of removed ones.

- `vectors` becomes a rowid table of int8 vectors with a per-vector scale (`float ≈ int8 · scale`):
  384 bytes plus a few, stored inline in its b-tree page, where the float32 `WITHOUT ROWID` table of
  m003 spilled every 1,536-byte vector into an overflow page of its own (4.7 KB a vector). Its `id`
  (AUTOINCREMENT, never reused) is what an in-memory index follows: every vector with an id above the
  last one it read is new to it.
- `vector_queue`: the rows that need a vector, filled by triggers on every write path (an insert, an
  edit of the embedded text, a prompt made private leaves it), emptied by the worker as it embeds them.
  The backfill reads it newest first by primary key: no scan past every row already embedded.
- `vector_removals`: the observation ids whose vector went (a forget, an edit, a model change), in order,
  so that the worker's index removes them too; it keeps ids only, never text, and the worker trims it.
- The float32 vectors of m003 are kept as `vectors_f32` until the worker converts them (numpy, seconds
  for 100k rows; a migration may run inside a hook, which has no numpy): the rows that have none are
  queued at once.
"""

from __future__ import annotations

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script

# What m016 queues of each kind, by table and the columns embedded (literal: never imported from elsewhere,
# so that editing another module cannot rewrite a released migration).
_EMBEDDED = {
    "observation": ("observations", ("title", "subtitle", "narrative")),
    "summary": ("summaries", ("request", "learned", "completed")),
    "prompt": ("prompts", ("text",)),
}


def _queue_triggers(kind: str, table: str, columns: tuple[str, ...]) -> str:
    """The triggers that keep `kind`'s rows in the queue and their vectors current."""
    public = " WHEN new.private = 0" if kind == "prompt" else ""
    still_public = " WHERE new.private = 0" if kind == "prompt" else ""
    forget = (f"DELETE FROM vectors WHERE kind = '{kind}' AND row_id = old.id;"
              f" DELETE FROM vector_queue WHERE kind = '{kind}' AND row_id = old.id;")
    script = f"""
        CREATE TRIGGER {table}_vector_queue AFTER INSERT ON {table}{public} BEGIN
            INSERT OR IGNORE INTO vector_queue (kind, row_id) VALUES ('{kind}', new.id);
        END;
        CREATE TRIGGER {table}_vector_delete AFTER DELETE ON {table} BEGIN {forget} END;
        CREATE TRIGGER {table}_vector_update AFTER UPDATE OF {", ".join(columns)} ON {table} BEGIN
            {forget}
            INSERT OR IGNORE INTO vector_queue (kind, row_id) SELECT '{kind}', new.id{still_public};
        END;
    """
    if kind == "prompt":
        script += f"""
        CREATE TRIGGER prompts_vector_private AFTER UPDATE OF private ON prompts WHEN new.private != 0 BEGIN {forget} END;
        CREATE TRIGGER prompts_vector_public AFTER UPDATE OF private ON prompts WHEN new.private = 0 AND old.private != 0 BEGIN
            INSERT OR IGNORE INTO vector_queue (kind, row_id) VALUES ('prompt', new.id);
        END;
        """
    return script


def m016_compact_vectors(conn: sqlite3.Connection) -> None:
    """See the module docstring."""
    run_script(conn, """
        DROP TRIGGER IF EXISTS observations_vector_delete;
        DROP TRIGGER IF EXISTS summaries_vector_delete;
        DROP TRIGGER IF EXISTS prompts_vector_delete;
        DROP TRIGGER IF EXISTS observations_vector_update;
        DROP TRIGGER IF EXISTS vectors_generation_insert;
        DROP TRIGGER IF EXISTS vectors_generation_delete;
        ALTER TABLE vectors RENAME TO vectors_f32;
        CREATE TABLE vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary', 'prompt')),
            row_id INTEGER NOT NULL,
            model TEXT NOT NULL,
            scale REAL NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (kind, row_id)
        );
        CREATE TABLE vector_queue (
            kind TEXT NOT NULL,
            row_id INTEGER NOT NULL,
            PRIMARY KEY (kind, row_id)
        ) WITHOUT ROWID;
        CREATE TABLE vector_removals (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            row_id INTEGER NOT NULL
        );
        CREATE TRIGGER vectors_generation_insert AFTER INSERT ON vectors WHEN new.kind = 'observation' BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
        END;
        CREATE TRIGGER vectors_generation_delete AFTER DELETE ON vectors WHEN old.kind = 'observation' BEGIN
            UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
            INSERT INTO vector_removals (row_id) VALUES (old.row_id);
        END;
    """)
    legacy = conn.execute("SELECT EXISTS (SELECT 1 FROM vectors_f32)").fetchone()[0]
    for kind, (table, columns) in _EMBEDDED.items():
        run_script(conn, _queue_triggers(kind, table, columns))
        if not legacy:
            continue
        # A legacy vector goes with its row, or with the text it was made from, before the worker converts it.
        run_script(conn, f"""
            CREATE TRIGGER {table}_vector_f32_delete AFTER DELETE ON {table} BEGIN
                DELETE FROM vectors_f32 WHERE kind = '{kind}' AND row_id = old.id;
            END;
            CREATE TRIGGER {table}_vector_f32_update AFTER UPDATE OF {", ".join(columns)} ON {table} BEGIN
                DELETE FROM vectors_f32 WHERE kind = '{kind}' AND row_id = old.id;
            END;
        """)
        public = " AND t.private = 0" if kind == "prompt" else ""
        conn.execute(f"INSERT OR IGNORE INTO vector_queue (kind, row_id) SELECT '{kind}', t.id FROM {table} t"
                     f" WHERE NOT EXISTS (SELECT 1 FROM vectors_f32 f WHERE f.kind = '{kind}' AND f.row_id = t.id){public}")
    if not legacy:
        conn.execute("DROP TABLE vectors_f32")
