"""Translate what a backend said (HTTP status, error type, message) into the provider error classes.

One table for every provider, so a 429 means the same thing whether it came from the Messages API,
an OpenAI-compatible server or the Claude Code CLI's result frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, TypeVar

from ..provider import AuthError, ProviderError, QuotaExhausted, RateLimited

T = TypeVar("T")

# Words that mark a billing or quota problem whatever the status code (Anthropic answers a low
# credit balance with 400, OpenAI an exhausted quota with 429 `insufficient_quota`).
QUOTA_MARKERS = (
    "insufficient_quota",
    "billing",
    "credit balance",
    "quota",
    "payment required",
    "spending limit",
    "usage limit",
)

# What the Claude Code CLI says when it has no usable login.
AUTH_MARKERS = ("not logged in", "please run /login", "invalid api key", "failed to authenticate")


def parse_retry_after(value: object) -> float | None:
    """Seconds from a `retry-after` header (only the delta-seconds form; dates are ignored)."""
    if value is None:
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def from_status(
    status: int | None,
    message: str,
    *,
    error_type: str = "",
    retry_after: float | None = None,
    origin: str = "observer",
) -> ProviderError:
    """The error class for one failed call; `status` None means no HTTP status was known."""
    text = f"{origin}: {message}".strip()
    lowered = f"{error_type} {message}".lower()
    if status == 402 or error_type in ("billing_error", "insufficient_quota") or any(
        marker in lowered for marker in QUOTA_MARKERS
    ):
        return QuotaExhausted(text)
    if (
        status in (401, 403)
        or error_type in ("authentication_error", "permission_error", "authentication_failed")
        or any(marker in lowered for marker in AUTH_MARKERS)
    ):
        return AuthError(text)
    if status in (429, 529) or error_type in ("rate_limit_error", "overloaded_error"):
        return RateLimited(text, retry_after=retry_after)
    if status is not None and 400 <= status < 500 and status not in (408, 409):
        # A malformed request stays malformed: do not burn the remaining attempts on it.
        return ProviderError(text, retryable=False)
    return ProviderError(text, retryable=True)


def from_sdk_exception(exc: Exception, sdk: ModuleType, origin: str) -> ProviderError:
    """An exception of the `anthropic` or `openai` package (same generator, same classes and shape)."""
    if isinstance(exc, sdk.APIStatusError):
        body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
        nested = body.get("error")
        error: dict[str, Any] = nested if isinstance(nested, dict) else body
        return from_status(
            exc.status_code,
            str(error.get("message") or exc.message),
            error_type=str(error.get("code") or error.get("type") or ""),
            retry_after=parse_retry_after(exc.response.headers.get("retry-after")),
            origin=origin,
        )
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{origin}: request timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(f"{origin}: connection failed ({exc})", retryable=True)
    # Truncated streams and undecodable bodies end up here (APIError, ValueError, KeyError...).
    return ProviderError(f"{origin}: unusable reply ({type(exc).__name__}: {exc})", retryable=True)


async def bounded_call(call: Awaitable[T], timeout: float, origin: str,
                       translate: Callable[[Exception], ProviderError]) -> T:
    """Await one backend call within `timeout` (+1 s for the SDK's own limit to fire first);
    every failure comes out as a ProviderError, translated once, here."""
    try:
        return await asyncio.wait_for(call, timeout + 1)
    except TimeoutError:
        raise ProviderError(f"{origin}: no reply within {timeout:g} s", retryable=True) from None
    except ProviderError:
        raise
    except Exception as exc:  # noqa: BLE001 - every SDK failure is translated once, here
        raise translate(exc) from exc
