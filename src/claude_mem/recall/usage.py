"""What memory costs and what it saves, for the stats page (`GET /api/stats`, key `usage`).

Costs: observations stored per day and type, the observer's input/output tokens per day, and its
tokens per processed tool call. Savings: the session-start index (what `context.build` would
inject now) against the full stored text of the observations it lists — the tokens progressive
disclosure keeps out of every session — and how often an observation is actually fetched in full.
Days are UTC, oldest first; every day of the range is listed, empty ones too.
"""

from datetime import UTC, date, datetime, timedelta
from typing import Any

from claude_mem.recall import context
from claude_mem.recall.sanitize import estimate_tokens
from claude_mem.store import Store
from claude_mem.store import failures as failures_store
from claude_mem.store import spend as ledger
from claude_mem.store import usage as store
from claude_mem.store import use as use_store

MAX_DAYS = 366
# The overall index figure sums this many of the most recently active projects (each one builds a context).
INDEX_PROJECTS = 50


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def day_range(days: int, today: date | None = None) -> list[str]:
    """The last `days` UTC days, oldest first, today included."""
    last = today or datetime.now(UTC).date()
    return [(last - timedelta(days=back)).isoformat() for back in range(days - 1, -1, -1)]


def index_savings(conn: Store, project: str | None, values: dict[str, Any], data_dir: str) -> dict[str, Any]:
    """The session-start index against the full observations it lists, for `project` or summed over
    the `INDEX_PROJECTS` most recently active ones: `{projects, observations, injected_tokens,
    narrative_tokens, ratio}` (`ratio` = narrative / injected: how many times larger the text is)."""
    keys = [project] if project else store.recent_projects(conn, INDEX_PROJECTS)
    listed = injected = narrative = 0
    for key in keys:
        built = context.build(conn, key, "startup", values=values, data_dir=data_dir)
        injected += int(built["tokens"])
        listed += len(built["ids"])
        narrative += sum(estimate_tokens(text) for text in store.full_texts(conn, list(built["ids"])))
    return {"projects": len(keys), "observations": listed, "injected_tokens": injected,
            "narrative_tokens": narrative, "ratio": _ratio(narrative, injected)}


def observer_spend(conn: Store, project: str | None, since: str) -> list[dict[str, Any]]:
    """The observer's ledger since `since` per day and provider: requests, tokens, and the batches that
    provider handled because a token budget was spent (`over_budget`); only days with spend are listed."""
    if not ledger.has_ledger(conn):
        return []
    return [{"day": row.day, "provider": row.provider, "requests": row.requests, "input": row.input_tokens,
             "output": row.output_tokens, "over_budget": row.over_budget}
            for row in ledger.per_day(conn, since, project=project)]


def usage(conn: Store, project: str | None, days: int, values: dict[str, Any], data_dir: str,
          today: date | None = None) -> dict[str, Any]:
    """The `usage` figures of the last `days` UTC days (1..`MAX_DAYS`) for `project` (None: all)."""
    listed = day_range(days, today)
    since = listed[0]
    tokens = store.observer_tokens_per_day(conn, project, since)
    per_day = {day: (tokens_in, tokens_out) for day, tokens_in, tokens_out in tokens}
    tokens_in = sum(row[1] for row in tokens)
    tokens_out = sum(row[2] for row in tokens)
    events = store.tool_events(conn, project, since)
    observations, fetched = store.fetches(conn, project)
    return {
        "project": project,
        "days": listed,
        "observations_per_day": [{"day": day, "type": kind, "count": count}
                                 for day, kind, count in store.observations_per_day(conn, project, since)],
        "observer_tokens_per_day": [{"day": day, "input": per_day.get(day, (0, 0))[0],
                                     "output": per_day.get(day, (0, 0))[1]} for day in listed],
        "tool_events": events,
        "observer_input_tokens": tokens_in,
        "observer_output_tokens": tokens_out,
        "tokens_per_event": _ratio(tokens_in + tokens_out, events),
        "index": index_savings(conn, project, values, data_dir),
        "fetches": {"observations": observations, "fetches": fetched, "per_observation": _ratio(fetched, observations)},
        "observer_spend": observer_spend(conn, project, since),
    }


IN_USE_DAYS = 7
IN_USE_RANKED = 5


def in_use(conn: Store, project: str | None, days: int = IN_USE_DAYS, now: datetime | None = None,
           ranked: int = IN_USE_RANKED) -> dict[str, Any]:
    """Memory in use over the last `days` days (issue 30): sessions given memory, observations shown and
    used (and how), the use rate (shown rows the same session then used), tokens injected; per day, per
    project and per recent session; the most used memories and the most shown unused ones."""
    moment = now or datetime.now(UTC)
    since = (moment - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    totals = use_store.totals(conn, project, since)
    shown, used_of_shown = totals["shown"], totals["used_of_shown"]
    projects = use_store.per_project(conn, since, 20) if project is None else []
    return {
        "days": days, "since": since, "project": project,
        "sessions": totals["sessions"], "shown": shown, "used": totals["used"], "used_of_shown": used_of_shown,
        "use_rate": _ratio(used_of_shown, shown), "tokens_injected": totals["tokens_injected"],
        "injections": totals["injections"], "by_how": {how: totals[how] for how in ("fetched", "searched", "cited")},
        "per_day": [{"day": day, "shown": day_shown, "used_of_shown": day_used, "use_rate": _ratio(day_used, day_shown),
                     "tokens_injected": tokens} for day, day_shown, day_used, tokens in use_store.per_day(conn, project, since)],
        "projects": [{**row, "use_rate": _ratio(int(row["used_of_shown"]), int(row["shown"]))} for row in projects],
        "recent_sessions": [{**row, "use_rate": _ratio(int(row["used_of_shown"]), int(row["shown"]))}
                            for row in use_store.sessions(conn, project, since, 10)],
        "most_used": use_store.most_used(conn, project, since, ranked),
        "least_used": use_store.least_used(conn, project, since, ranked),
        # the notes hooks added beside a failing command (issue 31) and what the session did after them
        "failure_notes": failures_store.note_totals(conn, project, since),
    }
