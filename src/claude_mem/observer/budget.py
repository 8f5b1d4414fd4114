"""The observer's token budgets: `observer_daily_tokens` (every provider, per UTC day) and
`observer_session_tokens` (one session, its whole life); 0 is unlimited.

Before a batch goes to the LLM the pipeline asks `check`: when today's spend (the ledger,
`store.spend`) has reached the daily budget, or the session's has reached the session budget, the
batch goes to the `offline` observer instead — capture goes on and nothing waits. The daily budget
comes back by itself when the UTC day turns; a session's holds for that session's life. The check
reads what is stored, so a batch already in flight (one per lane) may overshoot by its reply.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from claude_mem.domain import iso
from claude_mem.observer.provider import REGISTRY, Provider
from claude_mem.store import Store
from claude_mem.store import spend as ledger

log = logging.getLogger("claude_mem.observer")

OK = "ok"
OVER_DAILY = "over daily budget"
OVER_SESSION = "over session budget"
DAY_SECONDS = 86_400
FALLBACK = "offline"
LISTED_SESSIONS = 20


def utc_day(now: float) -> str:
    """The UTC day (`YYYY-MM-DD`) of a moment."""
    return time.strftime("%Y-%m-%d", time.gmtime(now))


def next_day_at(now: float) -> str:
    """When the UTC day after `now` begins (ISO)."""
    return iso((now // DAY_SECONDS + 1) * DAY_SECONDS)


def _number(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Limits:
    """The two budgets in tokens (input + output); 0 means unlimited."""

    daily: int = 0
    session: int = 0

    @classmethod
    def from_settings(cls, settings: Mapping[str, object]) -> Limits:
        return cls(_number(settings.get("observer_daily_tokens")), _number(settings.get("observer_session_tokens")))

    @property
    def unlimited(self) -> bool:
        return not (self.daily or self.session)


@dataclass(frozen=True)
class Verdict:
    """Whether a batch may use the LLM: `state` OK, or the budget that is spent (`spent` of `limit`),
    and when it resets (`resets_at`: the next UTC midnight; None for a session's budget)."""

    state: str = OK
    spent: int = 0
    limit: int = 0
    resets_at: str | None = None

    @property
    def over(self) -> bool:
        return self.state != OK


def check(conn: Store, limits: Limits, session_id: int, now: float) -> Verdict:
    """The verdict for the next batch of session `session_id` at `now` (runs on the db thread)."""
    if limits.daily:
        today = ledger.spent_on(conn, utc_day(now))
        if today >= limits.daily:
            return Verdict(OVER_DAILY, today, limits.daily, next_day_at(now))
    if limits.session:
        spent = ledger.spent_by_session(conn, session_id)
        if spent >= limits.session:
            return Verdict(OVER_SESSION, spent, limits.session)
    return Verdict()


def describe(verdict: Verdict) -> str:
    """The verdict in words, for the log, `/health` and `status`."""
    if verdict.state == OVER_DAILY:
        return (f"the daily observer budget is spent ({verdict.spent:,} of {verdict.limit:,} tokens today, UTC;"
                f" observer_daily_tokens): the {FALLBACK} observer takes over until {verdict.resets_at}")
    if verdict.state == OVER_SESSION:
        return (f"the session's observer budget is spent ({verdict.spent:,} of {verdict.limit:,} tokens;"
                f" observer_session_tokens): the {FALLBACK} observer takes over for the rest of the session")
    return "within budget"


def report(conn: Store, limits: Limits, now: float) -> dict[str, object]:
    """The budget for `/health` and `status`: limits, today's spend, state and when it resets, the active
    sessions over their budget, and the batches handled offline today because a budget was spent."""
    day = utc_day(now)
    spent = ledger.spent_on(conn, day)
    sessions = ledger.active_sessions_over(conn, limits.session) if limits.session else []
    if limits.daily and spent >= limits.daily:
        verdict = Verdict(OVER_DAILY, spent, limits.daily, next_day_at(now))
    elif sessions:
        verdict = Verdict(OVER_SESSION, 0, limits.session)
    else:
        verdict = Verdict()
    return {
        "daily_tokens": limits.daily, "session_tokens": limits.session, "day": day, "spent_today": spent,
        "state": verdict.state, "resets_at": next_day_at(now) if limits.daily else None,
        "sessions_over_budget": len(sessions), "sessions": sessions[:LISTED_SESSIONS],
        "over_budget_today": ledger.over_budget_on(conn, day),
        "reason": describe(verdict) if verdict.state == OVER_DAILY else (
            f"{len(sessions)} active session(s) spent their observer budget ({limits.session:,} tokens;"
            f" observer_session_tokens): the {FALLBACK} observer observes them" if sessions else "within budget"),
    }


def report_line(budget: Mapping[str, object]) -> str:
    """`report` in one line for `status`."""
    daily, session = _number(budget.get("daily_tokens")), _number(budget.get("session_tokens"))
    spent = _number(budget.get("spent_today"))
    line = f"budget: {spent:,} of {daily:,} tokens today (UTC)" if daily else \
        f"budget: {spent:,} tokens today (UTC), no daily limit"
    line += f", {session:,} per session" if session else ", no session limit"
    if budget.get("state") == OVER_DAILY:
        line += (f" — over daily budget (observer_daily_tokens): the {FALLBACK} observer takes over until"
                 f" {budget.get('resets_at')}")
    elif budget.get("state") == OVER_SESSION:
        line += (f" — {budget.get('sessions_over_budget')} active session(s) over their budget"
                 " (observer_session_tokens):"
                 f" the {FALLBACK} observer observes them")
    offline = _number(budget.get("over_budget_today"))
    if offline:
        line += f"; {offline:,} batch(es) observed {FALLBACK} today because a budget was spent"
    return line


def fallback_provider(settings: Mapping[str, object]) -> Provider:
    """The observer that takes over when a budget is spent, made by the one registry."""
    importlib.import_module("claude_mem.observer.providers")  # registers every built-in provider
    return REGISTRY.create(FALLBACK, settings)


@dataclass
class Switches:
    """Says once per switch (not per batch) when a budget is spent and when the daily one is back."""

    provider: str
    over_day: str = ""  # the UTC day whose budget is spent, while it is
    sessions: set[int] = field(default_factory=set)  # sessions whose budget is spent (logged)

    def note(self, verdict: Verdict, session_id: int, content_session_id: str, now: float) -> None:
        day = utc_day(now)
        if verdict.state == OVER_DAILY:
            if self.over_day != day:
                self.over_day = day
                log.warning("observer budget: %s", describe(verdict))
            return
        if self.over_day and self.over_day != day:
            log.info("observer budget: a new UTC day (%s); back to the %s observer", day, self.provider)
            self.over_day = ""
        if verdict.state == OVER_SESSION and session_id not in self.sessions:
            self.sessions.add(session_id)
            log.warning("observer budget of session %s: %s", content_session_id, describe(verdict))
