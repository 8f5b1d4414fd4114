"""`GET /health`: what the worker is, where, for how long, and whether its parts work (DESIGN §7)."""

from __future__ import annotations

import asyncio
import time

from claude_mem import privacy, settings
from claude_mem.observer import budget
from claude_mem.store import caught_late, queue
from claude_mem.worker.context import WorkerContext


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
    try:
        queue, caught, spend = await asyncio.to_thread(store_figures, ctx)
        database_error = None
    except Exception as exc:
        queue, caught, spend, database_error = None, None, None, f"{type(exc).__name__}: {exc}"
    problems = dict(ctx.service_errors)
    if database_error:
        problems["database"] = database_error
    warnings = await asyncio.to_thread(settings.problems, ctx.data_dir)
    store = {"status": "degraded" if "store" in problems or "database" in problems
             else "repaired" if ctx.store_notes else "ok", "notes": list(ctx.store_notes)}
    return {
        "status": "degraded" if problems or warnings or ctx.store_notes else "ok",
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
