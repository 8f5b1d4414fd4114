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
from claude_mem.store import usage as store

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
    }
