"""The observer's ledger (`observer_spend`, m018): requests and tokens per UTC day, provider and session,
and the batches a provider handled because a token budget was spent (`over_budget`).

The pipeline adds one entry per batch — in the batch's own transaction when its results are stored,
on its own when the batch failed after a reply that cost tokens. A forgotten session's spend still
counts for its day: the table has no foreign key to `sessions`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class Spend:
    """What one batch cost: on `day` (UTC, `YYYY-MM-DD`), through `provider`, in requests and tokens;
    `over_budget` counts the batch when `provider` handled it because a budget was spent."""

    day: str
    provider: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    over_budget: int = 0

    @property
    def empty(self) -> bool:
        return not (self.requests or self.input_tokens or self.output_tokens or self.over_budget)


@dataclass(frozen=True)
class DaySpend:
    """One row of the ledger summed over sessions: a day and provider's requests, tokens and offline batches."""

    day: str
    provider: str
    requests: int
    input_tokens: int
    output_tokens: int
    over_budget: int


def add(conn: sqlite3.Connection, session_id: int, spend: Spend) -> None:
    """Add `spend` to the session's row of its day and provider (runs inside the caller's transaction, if any)."""
    if spend.empty:
        return
    conn.execute(
        "INSERT INTO observer_spend (day, provider, session_id, requests, input_tokens, output_tokens, over_budget)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, provider, session_id) DO UPDATE SET"
        " requests = requests + excluded.requests, input_tokens = input_tokens + excluded.input_tokens,"
        " output_tokens = output_tokens + excluded.output_tokens, over_budget = over_budget + excluded.over_budget",
        (spend.day, spend.provider or "unknown", session_id, spend.requests, spend.input_tokens,
         spend.output_tokens, spend.over_budget),
    )


def spent_on(conn: sqlite3.Connection, day: str) -> int:
    """Tokens (input + output) every provider spent on `day`."""
    return int(conn.execute(
        "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM observer_spend WHERE day = ?", (day,),
    ).fetchone()[0])


def spent_by_session(conn: sqlite3.Connection, session_id: int) -> int:
    """Tokens (input + output) spent on one session, every day and provider."""
    return int(conn.execute(
        "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM observer_spend WHERE session_id = ?",
        (session_id,),
    ).fetchone()[0])


def over_budget_on(conn: sqlite3.Connection, day: str) -> int:
    """Batches handled on `day` because a budget was spent."""
    return int(conn.execute(
        "SELECT COALESCE(SUM(over_budget), 0) FROM observer_spend WHERE day = ?", (day,)).fetchone()[0])


def active_sessions_over(conn: sqlite3.Connection, limit: int) -> list[str]:
    """The content ids of active sessions that have spent at least `limit` tokens (oldest first)."""
    return [str(row[0]) for row in conn.execute(
        "SELECT s.content_session_id FROM sessions s WHERE s.status = 'active' AND (SELECT"
        " COALESCE(SUM(input_tokens + output_tokens), 0) FROM observer_spend WHERE session_id = s.id) >= ?"
        " ORDER BY s.id", (limit,),
    )]


def per_day(conn: sqlite3.Connection, since: str, until: str | None = None,
            project: str | None = None) -> list[DaySpend]:
    """The ledger per day and provider from `since` to `until` (days, both included), oldest day first;
    `project` keeps the spend of its sessions (a forgotten session then no longer shows)."""
    return [DaySpend(str(day), str(provider), int(requests), int(tokens_in), int(tokens_out), int(over))
            for day, provider, requests, tokens_in, tokens_out, over in conn.execute(
        "SELECT day, provider, SUM(requests), SUM(input_tokens), SUM(output_tokens), SUM(over_budget)"
        " FROM observer_spend WHERE day >= ? AND (? IS NULL OR day <= ?)"
        " AND (? IS NULL OR session_id IN (SELECT id FROM sessions WHERE project = ?))"
        " GROUP BY day, provider ORDER BY day, provider", (since, until, until, project, project),
    )]


def has_ledger(conn: sqlite3.Connection) -> bool:
    """Whether the store has the ledger (m018): a read-only open of an older store has not."""
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'observer_spend'").fetchone() is not None
