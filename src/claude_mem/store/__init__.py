"""The store: the only package that holds SQL (DESIGN §2a).

`store.open(data_dir)` is the one way in: it hands out a `Store`, the handle every surface (CLI, MCP
server, worker, hooks) passes to the repositories here — `capture` and `queue` (what the hooks and
the observer's queue write), `memory`, `results`, `forget` and `search` (observations, summaries,
prompts, sessions), `vectors`, `team`, `portable` and `foreign` (exports, the original claude-mem's
database), backups and repair. `rows` types the rows they hand out. Stdlib only: hooks import it.
"""

from claude_mem.store.db import HOOK_BUSY_MS, WORKER_BUSY_MS, DatabaseError, NoDatabase, Store, open
from claude_mem.store.transaction import transaction

__all__ = [
    "HOOK_BUSY_MS", "WORKER_BUSY_MS", "DatabaseError", "NoDatabase", "Store", "open", "transaction",
]
