"""The store (DESIGN §2a): the only package that holds SQL, and the one way in.

`store.open(data_dir)` hands out a `Store`, the handle every surface (CLI, MCP server, worker, hooks)
passes to the repositories here; `DatabaseError` and `NoDatabase` are what opening and querying
raise. `rows` types the rows the repositories hand out, and every column list derives from it;
`migrations` define the schema; `transaction` nests write transactions; `changes` is the log every
writer moves (the live stream reads it). Small repositories own their queries: `capture` (the
hooks' rows and the spool), `queue` and `results` (the observer's batches and what it wrote),
`memory`, `search`, `vectors`, `context`, `projects`, `forget`, `portable` and `imports`, `stats`
and `usage`, `team` and `team_server` (DESIGN §12); `foreign` reads the original claude-mem's
database. `backup`, `integrity`, `salvage`, `caught_late` and `checkup` keep the database whole.
What the hooks use is stdlib only.
"""

from claude_mem.store import db as _db
from claude_mem.store.db import HOOK_BUSY_MS, WORKER_BUSY_MS, DatabaseError, NewerSchema, NoDatabase, Store, open
from claude_mem.store.restore_first import restore_first as _restore_first
from claude_mem.store.transaction import transaction

_db.set_restorer(_restore_first)  # a lost database is restored before anything writes (store.restore_first)

__all__ = [
    "HOOK_BUSY_MS", "WORKER_BUSY_MS", "DatabaseError", "NewerSchema", "NoDatabase", "Store", "open", "transaction",
]
