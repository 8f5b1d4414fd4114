"""Migration m021 (issue 33, item 8): why an event failed, so that the transient failures come back.

- `pending_events.failure_class`: `transient` (the worker was killed or its lease ran out, the provider
  timed out, answered 5xx or could not be reached, the database was locked or refused the results) or
  `content` (something in the events themselves: the observer's reply for them unparseable attempt
  after attempt, a request the provider refuses as malformed, a summary that never came). Set when an
  event ends `failed`; NULL otherwise. A failed event without one counts as `content` (stays failed).
- `pending_events.revivals`: how many times a transient failure was put back in the queue by the worker
  (`store.queue.revive_transient`); bounded, so an event that kills the worker every time is not
  retried forever.

Events that already failed are classed by their last error, the way the worker words them.
"""

import _sqlite3 as sqlite3

from claude_mem.store.sql_script import run_script

# The last errors of failures that retrying later can fix (LIKE patterns, as the worker writes them):
# a killed worker, a lease run out, the provider's errors (timeouts, 5xx, connections; a 4xx it refused
# is worded the same and gets a bounded few more rounds), a locked database or results it refused.
# `MalformedReply`, `MissingSummary` and anything else are in the events' content.
TRANSIENT_ERRORS = ("lease expired%", "the worker stopped mid-batch%", "ProviderError:%", "RateLimited:%",
                    "StoreError:%", "%database is locked%")


def m021_failure_class(conn: sqlite3.Connection) -> None:
    """See the module docstring."""
    transient = " OR ".join("last_error LIKE ?" for _ in TRANSIENT_ERRORS)
    run_script(conn, """
        ALTER TABLE pending_events ADD COLUMN failure_class TEXT CHECK (failure_class IN ('transient', 'content'));
        ALTER TABLE pending_events ADD COLUMN revivals INTEGER NOT NULL DEFAULT 0;
    """)
    conn.execute(f"UPDATE pending_events SET failure_class = CASE WHEN {transient} THEN 'transient' ELSE 'content' END"
                 " WHERE status = 'failed'", TRANSIENT_ERRORS)
