"""`GET /health`: what the worker is, where, for how long, and whether its parts work (DESIGN §7).

`status` is `degraded` whenever `degraded` lists a reason, each `{code, reason}`: a problem a service
recorded (`problems`: the observer lane failing batch after batch, its writes meeting a locked
database, results that cannot be stored), a refused setting, a repair or recovery of the store, and
whatever the small check functions in `DEGRADED_CHECKS` find — today a write-lock probe of the
database (`store.probe`, a short busy timeout, cached for `LOCK_CACHE_SECONDS`: /health is polled).
A check takes the worker's context and returns reasons: strings, `(code, reason)` pairs or
`{code, reason}` dicts; it runs in a thread and one that raises is itself a reason. Wiring another
condition is one line in `DEGRADED_CHECKS`; `store_conditions` reads what the hooks and the store
recorded: disk full or read-only with events waiting, a newer schema, a restore before the first write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from claude_mem import privacy, settings
from claude_mem.observer import budget
from claude_mem.store import DatabaseError, caught_late, db, probe, queue
from claude_mem.worker.context import WorkerContext

Reason = dict[str, str]
Check = Callable[[WorkerContext], Iterable[object]]
LOCK_CACHE_SECONDS = 1.0
_locks: dict[str, tuple[float, str | None]] = {}  # data dir -> (monotonic time probed, lock error)


def database_lock(ctx: WorkerContext) -> list[Reason]:
    """A reason when a writer cannot get the database's write lock within `probe.PROBE_BUSY_MS`."""
    cached = _locks.get(ctx.data_dir)
    if cached is not None and time.monotonic() - cached[0] < LOCK_CACHE_SECONDS:
        error = cached[1]
    else:
        try:
            error = probe.write_lock(ctx.data_dir)
        except DatabaseError as exc:
            error = f"{type(exc).__name__}: {exc}"
        _locks[ctx.data_dir] = (time.monotonic(), error)
    if error is None:
        return []
    return [{"code": "database_locked",
             "reason": f"the database is locked: a writer waited {probe.PROBE_BUSY_MS} ms and got \"{error}\""
                       " (another process holds its write lock); hooks spool, the observer waits and retries"}]


def store_conditions(ctx: WorkerContext) -> list[Reason]:
    """What the hooks and the store recorded (`store.db.conditions`: a few small files, no database):
    the disk full or the data dir read-only with events waiting outside it, a schema newer than this build,
    a restore before the first write (unless this worker's own recovery already says so)."""
    return [{"code": str(item["state"]).replace("-", "_"), "reason": str(item["reason"])}
            for item in db.conditions(ctx.data_dir) if not (item["state"] == "recovered" and ctx.recovery)]


DEGRADED_CHECKS: list[Check] = [database_lock, store_conditions]


def as_reason(item: object, default_code: str) -> Reason:
    if isinstance(item, dict):
        return {"code": str(item.get("code") or default_code), "reason": str(item.get("reason") or item)}
    if isinstance(item, tuple) and len(item) == 2:
        return {"code": str(item[0]), "reason": str(item[1])}
    return {"code": default_code, "reason": str(item)}


def checked_reasons(ctx: WorkerContext, checks: Iterable[Check] | None = None) -> list[Reason]:
    """What every check in `checks` (default `DEGRADED_CHECKS`) finds; a check that fails says so."""
    found: list[Reason] = []
    for check in DEGRADED_CHECKS if checks is None else checks:
        name = getattr(check, "__name__", "check")
        try:
            found.extend(as_reason(item, name) for item in check(ctx) or ())
        except Exception as exc:
            found.append({"code": "health_check", "reason": f"the {name} check failed: {type(exc).__name__}: {exc}"})
    return found


def degraded_reasons(ctx: WorkerContext, problems: dict[str, str], warnings: list[str],
                     checked: list[Reason]) -> list[Reason]:
    """Every reason the worker is not simply ok, most severe first."""
    reasons = [*checked, *({"code": name, "reason": problem} for name, problem in problems.items())]
    if ctx.recovery:
        reasons.append({"code": "recovery", "reason": f"the database was recovered at {ctx.recovery.get('at')}:"
                                                      f" {ctx.recovery.get('problem')}"})
    reasons += [{"code": "store_repaired", "reason": note} for note in ctx.store_notes]
    reasons += [{"code": "settings", "reason": f"setting refused: {warning}"} for warning in warnings]
    return reasons


async def provider_health(ctx: WorkerContext) -> dict[str, object]:
    """The observer provider's {name, ok, reason}.

    The observer service plugs in by setting `ctx.provider_health` (an async callable returning
    that dict) in its `start`; until one does, the worker says truthfully that nothing observes.
    """
    # The name the observer service recorded at start; before that, the setting (validated, so normalised).
    name = ctx.provider_name or str(ctx.settings.get("provider") or "auto")
    if ctx.provider_health is not None:
        try:
            reported = await asyncio.wait_for(ctx.provider_health(), timeout=5.0)
            return {"name": str(reported.get("name", name)), "ok": bool(reported.get("ok")),
                    "reason": privacy.redact(str(reported.get("reason", "")))}  # may quote a base URL
        except Exception as exc:
            return {"name": name, "ok": False, "reason": f"health check failed: {type(exc).__name__}: {exc}"}
    return {"name": name, "ok": False, "reason": "no observer service is running in this worker"}


def store_figures(ctx: WorkerContext) -> tuple[dict[str, int], dict[str, object], dict[str, object]]:
    """The queue counts, what the second redaction pass caught (`store.caught_late`), and the observer's
    token budget as the worker applies it (its settings, the ledger)."""
    conn = ctx.connect()
    try:
        return (queue.queue_counts(conn), caught_late.report(conn),
                budget.report(conn, budget.Limits.from_settings(ctx.settings), time.time()))
    finally:
        conn.close()


async def health_report(ctx: WorkerContext) -> dict[str, object]:
    figures, checked = await asyncio.gather(asyncio.to_thread(store_figures, ctx),
                                            asyncio.to_thread(checked_reasons, ctx), return_exceptions=True)
    if isinstance(figures, BaseException):
        queue, caught, spend, database_error = None, None, None, f"{type(figures).__name__}: {figures}"
    else:
        (queue, caught, spend), database_error = figures, None
    if isinstance(checked, BaseException):
        checked = [{"code": "health_check", "reason": f"{type(checked).__name__}: {checked}"}]
    problems = dict(ctx.service_errors)
    if database_error:
        problems["database"] = database_error
    warnings = await asyncio.to_thread(settings.problems, ctx.data_dir)
    store = {"status": "degraded" if "store" in problems or "database" in problems
             else "repaired" if ctx.store_notes else "ok", "notes": list(ctx.store_notes)}
    degraded = degraded_reasons(ctx, problems, warnings, checked)
    return {
        "status": "degraded" if degraded else "ok",
        "degraded": degraded,  # [{code, reason}]: why the status is not ok
        "pid": ctx.pid,
        "version": ctx.version,
        "data_dir": ctx.data_dir,
        "port": ctx.port,
        "started": ctx.started,
        "uptime": round(ctx.uptime, 3),
        "provider": await provider_health(ctx),
        "queue": queue,
        # {daily_tokens, session_tokens, spent_today, state, reason, resets_at, …}: observer.budget.report
        "budget": spend,
        "privacy": caught,  # {secrets_caught_late, latest}: rows redacted after the hooks missed a secret
        "problems": problems,
        "store": store,  # repairs made since the worker started (restored backup, rebuilt index)
        "vectors": await asyncio.to_thread(ctx.vector_status) if ctx.vector_status else None,
        "team": await asyncio.to_thread(ctx.team_status) if ctx.team_status else None,
        # rows stored before m017 not yet in the keyword index with their neighbours' text
        "keyword_index": ctx.index_status() if ctx.index_status else None,
        "memory_use": ctx.use_status() if ctx.use_status else None,  # events read for the use of memory
        "failures": ctx.failures_status() if ctx.failures_status else None,  # events read for failures' fixes
        # Claude Code's auto memory notes of recently active projects, indexed read-only
        "auto_memory": ctx.auto_memory_status() if ctx.auto_memory_status else None,
        "warnings": warnings,  # refused settings, each with the value used instead
        "recovery": ctx.recovery,
    }
