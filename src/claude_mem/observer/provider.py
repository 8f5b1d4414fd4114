"""The observer provider interface (DESIGN §5): async and session-scoped.

A provider opens one `ObserverSession` per Claude Code session; the session keeps whatever
conversation state the backend needs (a live Agent SDK client, or a bounded history for stateless
HTTP APIs). Providers register by name; the worker picks one with the `provider` setting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

PROMPT_HEADER = "claude-mem observer v1"


class ProviderError(Exception):
    """An observer call failed. `retryable` says whether trying again may help."""

    retryable: bool = True

    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        if retryable is not None:
            self.retryable = retryable


class AuthError(ProviderError):
    """Credentials are missing or rejected: retrying will not help until the user acts."""

    retryable = False


class RateLimited(ProviderError):
    """429 or overload: back off (for `retry_after` seconds when the server said so) and retry."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message, retryable=True)
        self.retry_after = retry_after


class QuotaExhausted(ProviderError):
    """Billing or quota exhausted: pause the queue instead of burning attempts."""

    retryable = False


@dataclass(frozen=True)
class SessionInfo:
    """What an observer session knows about the Claude Code session it watches."""

    content_session_id: str
    project: str
    user_request: str = ""
    started_at: str = ""
    recap: str = ""  # stored observations, when a session is re-opened after a restart
    system_prompt: str = ""  # the observer's standing instructions; empty -> the providers' default


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Health:
    ok: bool
    reason: str = ""


@runtime_checkable
class ObserverSession(Protocol):
    async def send(self, prompt_text: str) -> Reply: ...

    async def close(self) -> None: ...


@runtime_checkable
class Provider(Protocol):
    name: str

    async def open(self, session_info: SessionInfo) -> ObserverSession: ...

    async def health(self) -> Health: ...

    async def aclose(self) -> None: ...


ProviderFactory = Callable[[Mapping[str, object]], Provider]


@dataclass
class Registry:
    factories: dict[str, ProviderFactory] = field(default_factory=dict)

    def register(self, name: str, factory: ProviderFactory) -> None:
        self.factories[name] = factory

    def create(self, name: str, settings: Mapping[str, object]) -> Provider:
        try:
            factory = self.factories[name]
        except KeyError:
            known = ", ".join(sorted(self.factories)) or "none"
            raise ProviderError(f"unknown observer provider {name!r} (known: {known})", retryable=False) from None
        return factory(settings)


REGISTRY = Registry()
