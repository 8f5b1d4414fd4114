"""The observer provider interface (DESIGN §5): async and session-scoped.

A provider opens one `ObserverSession` per Claude Code session; the session keeps whatever
conversation state the backend needs (a live Agent SDK client, or a bounded history for stateless
HTTP APIs). Each turn is an `ObserverRequest`: the prompt text an LLM provider sends, and the same
content as data (rendered events, the turn-end request) that the `offline` provider (and the test
suite's fake) answer from. Providers register by name, built-in ones here and others through the
`claude_mem.providers` entry points (`claude_mem.plugins`); the worker picks one with the `provider`
setting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from claude_mem import plugins
from claude_mem.domain import PROVIDERS
from claude_mem.observer.events import RenderedEvent
from claude_mem.runtime import observer_choice
from claude_mem.store.models import Related

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
    system_prompt: str = ""  # standing instructions + this session's context; empty -> built by `prompts`
    language: str = "English"  # what observations and summaries are written in (setting `observer_language`)


@dataclass(frozen=True)
class TurnEnd:
    """The user's turn ended: what the summary needs (the turn's request, Claude's last message)."""

    request: str = ""
    last_assistant_message: str = ""


@dataclass(frozen=True)
class ObserverRequest:
    """One observer turn: `text` is what an LLM provider sends; the other fields carry the same
    content as data for providers that answer without an LLM."""

    text: str  # starts with PROMPT_HEADER
    events: tuple[RenderedEvent, ...] = ()  # the events shown, oldest first
    turn_end: TurnEnd | None = None  # set when the prompt asks for the turn's summary
    summary_only: bool = False  # a follow-up asking for the summary a previous reply left out
    related: tuple[Related, ...] = ()  # existing observations a new one may supersede (issue 26)


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
    async def send(self, request: ObserverRequest) -> Reply: ...

    async def close(self) -> None: ...


@runtime_checkable
class Provider(Protocol):
    name: str
    # True: the standing instructions go in the system prompt (built from SessionInfo) and never in
    # a user turn. False: the conversation's first user turn carries them.
    takes_system_prompt: bool

    async def open(self, session_info: SessionInfo) -> ObserverSession: ...

    async def health(self) -> Health: ...

    async def aclose(self) -> None: ...


ProviderFactory = Callable[[Mapping[str, object]], Provider]


@dataclass
class Registry:
    """Provider factories by name: the one place a `provider` value becomes a provider.

    `observer.providers` registers a factory for every name of `domain.PROVIDERS` (`auto` included)
    and resolves `auto`; any other name is an installed plugin's (entry-point group
    `claude_mem.providers`), loaded when it is created. The worker, `status`, `/health` and the
    context header all go through it.
    """

    factories: dict[str, ProviderFactory] = field(default_factory=dict)

    def register(self, name: str, factory: ProviderFactory) -> None:
        self.factories[name] = factory

    def normalise(self, name: object) -> str:
        """The registered name for a `provider` value (`Claude ` is `claude`); ProviderError if unknown.

        The rule is `runtime.observer_choice.normalise` (the one the hooks and settings apply too).
        """
        try:
            wanted = observer_choice.normalise(name)
        except observer_choice.UnknownProvider as exc:
            raise ProviderError(str(exc), retryable=False) from None
        if wanted in PROVIDERS and wanted not in self.factories:  # a built-in name with no factory: a packaging bug
            raise ProviderError(f"observer provider {wanted!r} is not installed", retryable=False)
        return wanted

    def factory(self, name: object) -> ProviderFactory:
        """The factory for a `provider` value: a built-in one, or the installed plugin's."""
        wanted = self.normalise(name)
        if wanted in self.factories:
            return self.factories[wanted]
        try:
            loaded = plugins.load(plugins.PROVIDERS, wanted)
        except Exception as exc:
            raise ProviderError(f"observer provider plugin {wanted!r} cannot be loaded ({type(exc).__name__}: {exc})",
                                retryable=False) from None
        if not callable(loaded):
            raise ProviderError(f"observer provider plugin {wanted!r} is not a factory ({type(loaded).__name__})",
                                retryable=False)
        return loaded

    def create(self, name: str, settings: Mapping[str, object]) -> Provider:
        return self.factory(name)(settings)


REGISTRY = Registry()
