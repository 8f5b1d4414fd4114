"""The observer budget's cost per batch (issue 30): storing a typical batch's results (ten events, two
observations) as the pipeline does with a budget set — the budget check (today's spend, the session's) before
it, the ledger entry inside its transaction — against storing the same kind of batch with neither, on a store
whose ledger holds a year of spend (365 days × 300 sessions × 3 providers; `--quick`: 30 days). Rounds
interleave the two, medians are compared. Target: ≤ 1.10× the batch stored without a budget."""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time

from claude_mem.observer import budget
from claude_mem.observer.parser import ParsedObservation
from claude_mem.store import db, migrations, queue, results, spend

TARGET_RATIO = 1.10
SESSIONS_PER_DAY = 300
PROVIDERS = ("claude", "anthropic", "offline")
EVENTS = 10  # a typical batch: ten tool events, two observations of the length the observer writes
NARRATIVE = ("The retry loop in HttpClient.request now backs off exponentially with full jitter and gives up after"
             " four attempts; POST is never retried because creating an invoice is not idempotent. ") * 3


def _observations(tag: str) -> list[ParsedObservation]:
    return [ParsedObservation(type="change", title=f"HttpClient retries transient errors ({tag} {n})",
                              narrative=NARRATIVE, facts=("4 attempts at most", "delays 0.5 s to 8 s", "POST excluded"),
                              files_modified=("src/http_client.py",)) for n in range(2)]


def _seed_ledger(conn: db.sqlite3.Connection, days: int, now: float) -> int:
    rows = [(budget.utc_day(now - back * 86_400), provider, back * SESSIONS_PER_DAY + n, 5, 10_000, 1_000, 0)
            for back in range(days) for n in range(SESSIONS_PER_DAY) for provider in PROVIDERS]
    conn.executemany("INSERT INTO observer_spend VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    return len(rows)


def _claim(conn: db.sqlite3.Connection, session_id: int, key: str) -> queue.Batch:
    for n in range(EVENTS):
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, prompt_number, payload)"
                     " VALUES (?, ?, 'tool', 1, ?)", (f"{key}-{n}", session_id, json.dumps({"tool_name": "Bash"})))
    conn.commit()
    batch = queue.claim_batch(conn, lease_seconds=300, max_events=10, max_chars=100_000, max_attempts=3)
    assert batch is not None
    return batch


def main(argv: list[str]) -> dict:
    days, rounds = (30, 300) if "--quick" in argv else (365, 1500)
    now = time.time()
    limits = budget.Limits(daily=10**12, session=10**12)  # never spent: the check runs, the LLM is used
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as data_dir:
        conn = db.connect(db.db_path(data_dir))
        migrations.migrate(conn)
        ledger_rows = _seed_ledger(conn, days, now)
        conn.execute("INSERT INTO sessions (content_session_id, project, cwd) VALUES ('bench', '/p', '/p')")
        session_id = conn.execute("SELECT id FROM sessions").fetchone()[0]
        timings: dict[str, list[float]] = {"plain": [], "budget": []}
        for n in range(rounds):
            for kind in (("plain", "budget") if n % 2 else ("budget", "plain")):
                batch = _claim(conn, session_id, f"{kind}-{n}")
                observations = _observations(f"{kind} {n}")
                started = time.perf_counter()
                if kind == "budget":
                    budget.check(conn, limits, session_id, now)
                    cost = spend.Spend(budget.utc_day(now), "claude", 1, 2_000, 300)
                    results.store_batch(conn, batch, observations, None, provider="claude", spend=cost)
                else:
                    results.store_batch(conn, batch, observations, None, provider="claude")
                timings[kind].append(time.perf_counter() - started)
        conn.close()
    plain, with_budget = (statistics.median(timings[k]) * 1000 for k in ("plain", "budget"))
    ratio = round(with_budget / plain, 3)
    return {"ledger_rows": ledger_rows, "rounds": rounds, "store_batch_p50_ms": round(plain, 3),
            "with_budget_p50_ms": round(with_budget, 3), "ratio": ratio, "target_ratio": TARGET_RATIO,
            "within_budget": ratio <= TARGET_RATIO}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
