"""The observer pipeline: claim a batch → clean it once more → prompt → reply → parse → store, in
`lanes` parallel loops.

All SQLite work runs on one dedicated thread (the connection is not shared with the event loop),
so a busy database never stalls the worker's HTTP side. Provider errors are handled by kind:
a malformed reply or a transient error uses up an attempt and backs off exponentially; a rate limit
backs off without using one; missing credentials or an exhausted quota pause the whole queue and
say why in `/health` until the provider reports healthy again.

When a token budget is spent (`observer.budget`), the batch goes to the `offline` observer instead of
the LLM, and every batch's requests and tokens go into the observer's ledger (`store.spend`).

A batch that ends the user's turn must produce its summary: when the reply leaves it out, the same
conversation is asked for the summary alone (up to `max_attempts` requests in all); if it still
never comes, the batch's observations are stored and its `summarize` event is `failed`, visibly.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from claude_mem.domain import iso, utc_stamp
from claude_mem.index import fts
from claude_mem.observer import budget, prompts
from claude_mem.observer.conversations import Conversation, Conversations
from claude_mem.observer.events import RenderedEvent
from claude_mem.observer.parser import ParsedReply, parse
from claude_mem.observer.provider import (
    AuthError,
    Health,
    ObserverRequest,
    Provider,
    ProviderError,
    QuotaExhausted,
    RateLimited,
    Reply,
    SessionInfo,
    TurnEnd,
)
from claude_mem.store import DatabaseError, Store, caught_late, integrity, probe, queue, results
from claude_mem.store import spend as ledger
from claude_mem.store.models import Batch, PendingEvent, Related

log = logging.getLogger("claude_mem.observer")
T = TypeVar("T")

POLL_SECONDS = 0.5
PAUSE_RECHECK_SECONDS = 30.0
FAILING_STREAK = 3  # batches failed in a row before /health calls the observer lane failing
LOCK_WAIT_SECONDS = (1.0, 15.0)  # the first and the longest wait while the database is locked


class MalformedReply(ProviderError):
    """The reply held no valid block and no `<skip/>`."""


@dataclass
class Answer:
    """What the observer answered for one batch: the reply (tokens of every request), what was
    parsed from it, and the events it could not answer (id -> error)."""

    reply: Reply
    parsed: ParsedReply
    failed: dict[int, str] = field(default_factory=dict)


@dataclass
class Route:
    """Who answers one batch: the conversations of the provider in charge and what the batch costs it
    (every request sent, the tokens of every reply); `over_budget` when the fallback stands in."""

    conversations: Conversations
    provider: str
    day: str
    over_budget: bool = False
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def spend(self, stored: bool) -> ledger.Spend:
        """The ledger entry; a batch counts as handled over budget only once its results are stored."""
        return ledger.Spend(self.day, self.provider, self.requests, self.input_tokens, self.output_tokens,
                            int(self.over_budget and stored))


def _setting(settings: dict[str, object], key: str, default: float) -> float:
    value = settings.get(key, default)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


class Pipeline:
    def __init__(self, conn: Store, settings: dict[str, object], provider: Provider,
                 publish: Callable[[str, object], None] | None = None, poll_seconds: float = POLL_SECONDS,
                 store_notes: list[str] | None = None, problems: dict[str, str] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.conn = conn
        self.settings = settings
        self.provider = provider
        self.publish = publish or (lambda kind, data: None)
        self.poll_seconds = poll_seconds
        self.max_attempts = int(_setting(settings, "max_attempts", 3))
        self.backoff = _setting(settings, "retry_backoff_seconds", 2.0)
        self.lease_seconds = _setting(settings, "lease_seconds", 300)
        self.timeout = _setting(settings, "observer_timeout_seconds", 120)
        self.lanes = max(1, int(_setting(settings, "max_observers", 2)))
        self.conversations = Conversations(provider, self.lanes)
        self.clock = clock  # when "today" is (UTC): the daily budget and the ledger's day
        self.limits = budget.Limits.from_settings(settings)
        self.switches = budget.Switches(provider.name)
        # The observer that stands in when a budget is spent (none needed without a budget, or offline already).
        self.fallback = (Conversations(budget.fallback_provider(settings), self.lanes)
                         if not self.limits.unlimited and provider.name != budget.FALLBACK else None)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="observer-db")
        self.paused_until = 0.0
        self.pause_reason = ""
        self.rate_limited = 0
        self.stopping = asyncio.Event()
        self.in_flight: dict[int, Batch] = {}
        # For /health: repairs the store needed (an index rebuilt), and a problem it still has.
        self.store_notes = store_notes if store_notes is not None else []
        self.problems = problems if problems is not None else {}
        self.streak = 0  # batches failed in a row (any lane); 0 after one is stored
        self.locked_since: float | None = None  # when the observer's writes started meeting a locked database
        self.lock_waits = 0

    async def db(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(self.conn, *args, **kwargs))

    # -- the loop ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Process batches until `stop()`; each lane finishes its in-flight batch before leaving."""
        await asyncio.gather(*(self._lane() for _ in range(self.lanes)))

    async def _lane(self) -> None:
        while not self.stopping.is_set():
            wait = self.poll_seconds
            try:
                worked = await self.step()
                self._unlocked()
            except DatabaseError as exc:
                if not probe.is_lock_error(exc):
                    log.exception("observer lane error")
                    worked = False
                else:  # one line per episode, not a traceback per poll; the lane waits and tries again
                    wait, worked = self._locked(exc), False
            except Exception:
                log.exception("observer lane error")
                worked = False
            if not worked:
                try:
                    await asyncio.wait_for(self.stopping.wait(), wait)
                except TimeoutError:
                    pass

    def _locked(self, exc: BaseException) -> float:
        """Note that a write met a locked database (logged once per episode, named in /health); how long
        to wait before trying again (doubling from `LOCK_WAIT_SECONDS[0]` to `[1]`)."""
        now = time.time()
        if self.locked_since is None:
            self.locked_since = now
            log.warning("observer: the database is locked (%s); waiting for the other process to let go,"
                        " retrying (events stay queued)", exc)
        self.problems["observer_writes"] = (f"the observer's writes meet a locked database since {iso(self.locked_since)}"
                                            f" ({exc}); it retries")
        first, longest = LOCK_WAIT_SECONDS
        self.lock_waits += 1
        return float(min(longest, first * 2.0 ** min(self.lock_waits - 1, 10)))

    def _unlocked(self) -> None:
        if self.locked_since is not None:
            log.info("observer: the database is writable again after %.0f s", time.time() - self.locked_since)
            self.locked_since, self.lock_waits = None, 0
            self.problems.pop("observer_writes", None)

    async def step(self) -> bool:
        """Claim and process one batch; False when nothing is due (or the queue is paused)."""
        if not await self._may_claim():
            return False
        batch = await self.db(
            queue.claim_batch, lease_seconds=self.lease_seconds, max_attempts=self.max_attempts,
            max_events=int(_setting(self.settings, "batch_max_events", 20)),
            max_chars=int(_setting(self.settings, "batch_max_chars", 30000)),
        )
        if batch is None:
            return False
        self.in_flight[batch.session_id] = batch
        try:
            # The hooks redacted with the rules of their day: what this second pass catches is
            # redacted in the stored rows too (and counted) before the observer is shown anything.
            await self._process(await self.db(caught_late.clean_batch, batch))
        except asyncio.CancelledError:
            await asyncio.shield(self.db(queue.release_batch, batch))
            raise
        finally:
            self.in_flight.pop(batch.session_id, None)
        self.publish("queue", await self.db(queue.queue_counts))
        return True

    async def _may_claim(self) -> bool:
        if self.stopping.is_set():
            return False
        if time.time() < self.paused_until:
            return False
        if self.pause_reason:
            health = await self._provider_health()
            if not health.ok:
                self.paused_until = time.time() + PAUSE_RECHECK_SECONDS
                return False
            log.info("observer provider healthy again; resuming the queue (%s)", self.pause_reason)
            self.pause_reason = ""
        return True

    # -- one batch --------------------------------------------------------------------------------

    async def _process(self, batch: Batch) -> None:
        observed = [e for e in batch.events if e.kind in prompts.OBSERVED_KINDS]
        summarize = batch.first("summarize")
        answer = Answer(Reply(text="<skip/>"), parse("<skip/>"))
        route = None
        if observed or summarize is not None:
            route = await self._route(batch)
            try:
                answer = await self._ask(batch, observed, summarize, route)
            except ProviderError as exc:
                await self._failed(batch, exc, route)
                return
            except Exception as exc:  # a bug or an unexpected library error: visible, retried
                log.exception("observer batch %s failed", batch.ids)
                await self._failed(batch, ProviderError(f"{type(exc).__name__}: {exc}"), route)
                return
        try:
            stored = await self._store_patiently(batch, answer, route)
        except DatabaseError as exc:
            if probe.is_lock_error(exc):
                raise  # still locked near the lease's end: the lane says so once; the lease returns the batch
            stored = await self._store_failed(batch, answer, exc, route)
            if stored is None:
                return
        self.problems.pop("store", None)
        if route is not None:  # the observer answered (a batch with nothing to observe proves nothing)
            self._succeeded()
        self.rate_limited = 0
        # The stored rows reach the stream through the change log (worker.change_feed), as every write does.
        if stored is None:
            return
        if stored.session_completed:
            await self._close(batch.content_session_id)

    async def _route(self, batch: Batch) -> Route:
        """The LLM, or the fallback when a budget is spent (said once per switch in the log); a session
        that changes hands leaves its other conversation closed (re-opened later with a recap)."""
        now = self.clock()
        day = budget.utc_day(now)
        if self.fallback is None:
            return Route(self.conversations, self.provider.name, day)
        verdict = await self.db(budget.check, self.limits, batch.session_id, now)
        self.switches.note(verdict, batch.session_id, batch.content_session_id, now)
        if verdict.over:
            await self.conversations.close(batch.content_session_id)
            return Route(self.fallback, budget.FALLBACK, day, over_budget=True)
        await self.fallback.close(batch.content_session_id)
        return Route(self.conversations, self.provider.name, day)

    async def _store_patiently(self, batch: Batch, answer: Answer, route: Route | None) -> results.Stored | None:
        """Store the answer (already paid for); while the database is locked, wait and try again until half
        the lease is used, then let the lock error through."""
        deadline = time.monotonic() + self.lease_seconds / 2
        while True:
            try:
                stored = await self._store(batch, answer, route)
                self._unlocked()
                return stored
            except DatabaseError as exc:
                if not probe.is_lock_error(exc) or self.stopping.is_set():
                    raise
                wait = self._locked(exc)
                if time.monotonic() + wait > deadline:
                    raise
                await asyncio.sleep(wait)

    def _succeeded(self) -> None:
        if self.streak >= FAILING_STREAK:
            log.info("observer: a batch was stored again after %d failed in a row", self.streak)
        self.streak = 0
        self.problems.pop("observer", None)

    def _failing(self, message: str) -> None:
        """Count a failed batch; from `FAILING_STREAK` in a row on, /health names the lane failing."""
        self.streak += 1
        if self.streak >= FAILING_STREAK:
            self.problems["observer"] = (f"{self.streak} batches in a row failed; the last at {utc_stamp()}:"
                                         f" {message[:300]}")

    async def _store(self, batch: Batch, answer: Answer, route: Route | None) -> results.Stored | None:
        return await self.db(
            results.store_batch, batch, answer.parsed.observations, answer.parsed.summary,
            input_tokens=answer.reply.input_tokens, output_tokens=answer.reply.output_tokens,
            provider=route.provider if route else self.provider.name, failed=answer.failed,
            spend=route.spend(stored=True) if route else None,
        )

    async def _store_failed(self, batch: Batch, answer: Answer, exc: DatabaseError,
                            route: Route | None) -> results.Stored | None:
        """The database refused the batch's results: a damaged full-text index is the usual cause (it
        passes `quick_check`), so check the indexes, rebuild a broken one and store again; else the
        attempt fails with the database's own words, not a lease that expires later."""
        log.error("storing the results of batch %s failed: %s", batch.ids, exc)
        repair = await self.db(integrity.repair_indexes)
        if repair.rebuilt:
            self.store_notes.append(f"{utc_stamp()}: rebuilt the damaged search index(es) "
                                    f"{', '.join(repair.rebuilt)} when a batch could not be stored")
            try:
                return await self._store(batch, answer, route)
            except DatabaseError as again:
                exc = again
        self.problems["store"] = f"results cannot be stored: {type(exc).__name__}: {exc}" + (
            f"; index check: {repair.error}" if repair.error else "")
        self._failing(f"StoreError: {exc}")
        await self.db(queue.fail_batch, batch, f"StoreError: {exc}", max_attempts=self.max_attempts,
                      backoff_base=self.backoff)
        return None

    async def _ask(self, batch: Batch, observed: list[PendingEvent], summarize: PendingEvent | None,
                   route: Route) -> Answer:
        info = await self.db(_session_info, batch, str(self.settings.get("observer_language") or "English"))
        day = results.event_time(batch, iso())[:10]  # the events' own day: an import of September is September
        conversation = await route.conversations.get(info, day)
        turn_end = None
        if summarize is not None:
            request = await self.db(results.turn_request, batch.session_id, summarize.prompt_number)
            turn_end = TurnEnd(request=request,
                               last_assistant_message=str(summarize.payload.get("last_assistant_message") or ""))
        shown = prompts.observed_events(observed, batch.project)
        related = await self.db(_related, batch, shown)
        turn = prompts.turn_request(observed, root=batch.project, opening=conversation.opening, turn_end=turn_end,
                                    date=day, related=related, rendered=shown)
        reply = await self._send(conversation, turn, route)
        conversation.opening = ""
        parsed = parse(reply.text)
        if not parsed.ok:
            raise MalformedReply(f"reply had no valid block and no <skip/>: {reply.text[:200]!r}")
        answer = Answer(reply, parsed)
        if summarize is not None and turn_end is not None and parsed.summary is None:
            await self._ask_summary(conversation, turn_end, summarize, answer, route)
        return answer

    async def _ask_summary(self, conversation: Conversation, turn_end: TurnEnd, summarize: PendingEvent,
                           answer: Answer, route: Route) -> None:
        """The reply left out the turn's summary: ask for it alone, or fail the `summarize` event."""
        asked = 1
        while asked < self.max_attempts:
            asked += 1
            reply = await self._send(conversation, prompts.summary_follow_up(turn_end), route)
            answer.reply = Reply(answer.reply.text, answer.reply.input_tokens + reply.input_tokens,
                                 answer.reply.output_tokens + reply.output_tokens)
            summary = parse(reply.text).summary
            if summary is not None:
                answer.parsed.summary = summary
                return
        log.warning("observer gave no summary for event %s (session %s) after %d requests",
                    summarize.id, conversation.info.content_session_id, asked)
        answer.failed[summarize.id] = (
            f"MissingSummary: the observer's reply had no <summary> for this turn after {asked} request(s)")

    async def _send(self, conversation: Conversation, request: ObserverRequest, route: Route) -> Reply:
        route.requests += 1
        try:
            reply = await asyncio.wait_for(conversation.session.send(request), self.timeout)
        except TimeoutError:
            raise ProviderError(f"no observer reply within {self.timeout:.0f} s") from None
        conversation.turns += 1
        route.input_tokens += reply.input_tokens
        route.output_tokens += reply.output_tokens
        return reply

    async def _failed(self, batch: Batch, exc: ProviderError, route: Route | None = None) -> None:
        """Record a failed attempt according to the kind of error, and what its requests cost."""
        # A conversation that produced an error is not trusted for the redo: it re-opens with a recap.
        await self._close(batch.content_session_id)
        if route is not None and route.requests:
            try:
                await self.db(ledger.add, batch.session_id, route.spend(stored=False))
            except DatabaseError as db_error:
                log.warning("observer batch %s: its spend was not recorded: %s", batch.ids, db_error)
        message = f"{type(exc).__name__}: {exc}"
        log.warning("observer batch %s (session %s): %s", batch.ids, batch.content_session_id, message)
        self._failing(message)
        common = {"max_attempts": self.max_attempts, "backoff_base": self.backoff}
        if isinstance(exc, RateLimited):
            self.rate_limited += 1
            wait = exc.retry_after if exc.retry_after is not None else self.backoff * 2 ** min(self.rate_limited, 6)
            self.paused_until = time.time() + wait
            # Repeated rate limits do use attempts eventually, so a batch cannot loop forever.
            burn = self.rate_limited > self.max_attempts * 3
            await self.db(queue.fail_batch, batch, message, burn=burn, delay=wait, **common)
        elif isinstance(exc, (AuthError, QuotaExhausted)):
            self.pause_reason = message
            self.paused_until = time.time() + PAUSE_RECHECK_SECONDS
            await self.db(queue.fail_batch, batch, message, burn=False, delay=0.0, **common)
        else:
            await self.db(queue.fail_batch, batch, message, final=not exc.retryable,
                          failure_class=failure_class(exc), **common)

    # -- housekeeping -----------------------------------------------------------------------------

    async def sweep_idle(self) -> list[str]:
        hours = _setting(self.settings, "session_idle_hours", 24)
        idle = await self.db(results.mark_idle_sessions, hours)
        for content_session_id in idle:
            await self._close(content_session_id)
        return idle

    async def _close(self, content_session_id: str) -> None:
        """Close the session's observer conversation, the fallback's too."""
        await self.conversations.close(content_session_id)
        if self.fallback is not None:
            await self.fallback.close(content_session_id)

    async def _provider_health(self) -> Health:
        try:
            return await asyncio.wait_for(self.provider.health(), 10.0)
        except Exception as exc:
            return Health(ok=False, reason=f"{type(exc).__name__}: {exc}")

    async def health(self) -> dict[str, object]:
        """{name, ok, reason} for /health: the provider's own report, unless the queue is paused."""
        health = await self._provider_health()
        report: dict[str, object] = {"name": self.provider.name, "ok": health.ok, "reason": health.reason}
        if self.pause_reason:
            report.update(ok=False, reason=f"queue paused: {self.pause_reason}")
        elif time.time() < self.paused_until:
            report["reason"] = f"{health.reason} (rate limited; resuming in {self.paused_until - time.time():.0f} s)"
        return report

    async def stop(self, grace: float = 10.0, lanes: asyncio.Task[None] | None = None) -> None:
        """Stop claiming; let in-flight batches finish within `grace`, else release them; close all."""
        self.stopping.set()
        if lanes is not None:
            try:
                await asyncio.wait_for(asyncio.shield(lanes), grace)
            except TimeoutError:
                lanes.cancel()
                try:
                    await lanes
                except asyncio.CancelledError:
                    pass
        await self.conversations.close_all()
        if self.fallback is not None:
            await self.fallback.close_all()

    def close(self) -> None:
        self.executor.shutdown(wait=True)


def failure_class(exc: ProviderError) -> str:
    """`content` when the events themselves are the cause — the observer's reply for them unparseable
    attempt after attempt, a request the provider refuses as malformed (a 4xx: `retryable` False);
    `transient` for the rest (timeouts, 5xx, connections, a bug met once), which the worker retries later."""
    return queue.CONTENT if isinstance(exc, MalformedReply) or not exc.retryable else queue.TRANSIENT


def _related(conn: Store, batch: Batch, shown: Sequence[RenderedEvent]) -> list[Related]:
    """The project's existing observations the batch's events touch (same files, matching words)."""
    files = [event.file for event in shown if event.file]
    words = " ".join(" ".join((event.body[:300], event.description, event.command[:200])) for event in shown)
    try:
        return results.related_observations(conn, batch.project, files, fts.keyword_expression(words[:2000]))
    except DatabaseError as exc:  # a hint only: a damaged table must not fail the batch (storing repairs it)
        log.warning("observer batch %s: no related observations: %s", batch.ids, exc)
        return []


def _session_info(conn: Store, batch: Batch, language: str = "English") -> SessionInfo:
    """What the observer conversation of `batch`'s session opens with (runs on the db thread)."""
    request = results.first_request(conn, batch.session_id)
    if request is None:
        first_event = batch.first("prompt")
        request = str(first_event.payload.get("prompt") or "") if first_event else ""
    return SessionInfo(content_session_id=batch.content_session_id, project=batch.project,
                       user_request=request[:2000], started_at=results.started_at(conn, batch.session_id),
                       recap=results.recap(conn, batch.session_id), language=language)
