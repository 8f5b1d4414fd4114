"""`claude` observer: the user's Claude Code login through `claude-agent-sdk` (streaming input).

One `ClaudeSDKClient` — one CLI child — per open observer session, each owned by its own asyncio
task (the SDK's client must connect, talk and disconnect inside one task, while the pipeline may
call `send` from any). At most `max_observers` children live at once: opening another closes the
least recently used idle one, and children idle for `idle_seconds` are closed too. A session whose
child was closed (or died, or timed out) starts a fresh child on its next `send`, with a recap of
what it already recorded in the system prompt.

The child loads no settings, hooks or plugins (`setting_sources=[]`), has no tools (`tools=[]`),
persists no transcript (`--no-session-persistence`), and carries `CLAUDE_MEM_OBSERVER_CHILD=1` so
our own hooks exit at once should they ever fire inside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    CLINotFoundError,
    ResultError,
    ResultMessage,
    SystemMessage,
    TextBlock,
)

from ..prompts import system_prompt_for
from ..provider import AuthError, Health, ObserverRequest, ProviderError, Reply, SessionInfo
from .cli import auth_status, child_env, resolve_cli
from .errors import from_status
from .history import BoundedHistory

log = logging.getLogger(__name__)
STDERR_LINES = 50
CLOSE_TIMEOUT = 15.0


def translate(exc: BaseException) -> ProviderError:
    """An Agent SDK exception as a provider error."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, CLINotFoundError):
        return AuthError(f"claude: Claude Code CLI not found ({exc})")
    if isinstance(exc, ResultError):
        return from_status(exc.api_error_status, exc.result or str(exc), origin="claude")
    if isinstance(exc, ClaudeSDKError):
        return ProviderError(f"claude: CLI failed ({str(exc)[:300]})", retryable=True)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return ProviderError("claude: no reply in time", retryable=True)
    return ProviderError(f"claude: {type(exc).__name__}: {exc}", retryable=True)


def reply_from(messages: list[Any]) -> Reply:
    """The observer reply of one turn, or the error its result frame reports."""
    result = next((m for m in reversed(messages) if isinstance(m, ResultMessage)), None)
    if result is None:
        raise ProviderError("claude: turn ended without a result", retryable=True)
    if result.is_error:
        raise from_status(result.api_error_status, result.result or "; ".join(result.errors or []) or result.subtype,
                          origin="claude")
    text = "".join(
        block.text for m in messages if isinstance(m, AssistantMessage) for block in m.content if isinstance(block, TextBlock)
    ) or (result.result or "")
    if not text.strip():
        raise ProviderError("claude: empty reply", retryable=True)
    usage = result.usage or {}
    input_tokens = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    return Reply(text, input_tokens, int(usage.get("output_tokens") or 0))


class ClientActor:
    """One CLI child, owned by one task; prompts go in through a queue, replies come back as futures."""

    def __init__(self, options: ClaudeAgentOptions, timeout: float) -> None:
        self.options = options
        self.timeout = timeout
        self.inbox: asyncio.Queue[tuple[str, asyncio.Future[Reply]] | None] = asyncio.Queue()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._run(), name="claude-observer-client")
        self.session_id = ""
        self.alive = True

    async def _run(self) -> None:
        client = ClaudeSDKClient(self.options)
        pending: asyncio.Future[Reply] | None = None
        try:
            async with asyncio.timeout(self.timeout):
                await client.connect()
            self.ready.set_result(None)
            while True:
                item = await self.inbox.get()
                if item is None:
                    return
                prompt, pending = item
                # A turn that times out or breaks leaves the child in an unknown state: the
                # exception ends this actor, and the session starts a fresh child next time.
                async with asyncio.timeout(self.timeout):
                    await client.query(prompt)
                    messages = [m async for m in client.receive_response()]
                for message in messages:
                    if isinstance(message, SystemMessage) and message.subtype == "init":
                        self.session_id = str(message.data.get("session_id") or self.session_id)
                try:
                    reply = reply_from(messages)
                except ProviderError as exc:
                    pending.set_exception(exc)
                else:
                    pending.set_result(reply)
                pending = None
        except BaseException as exc:
            error = translate(exc)
            if not self.ready.done():
                self.ready.set_exception(error)
            if pending is not None and not pending.done():
                pending.set_exception(error)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.alive = False
            self._fail_queued()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(client.disconnect(), CLOSE_TIMEOUT)

    def _fail_queued(self) -> None:
        while not self.inbox.empty():
            item = self.inbox.get_nowait()
            if item is not None and not item[1].done():
                item[1].set_exception(ProviderError("claude: observer client closed", retryable=True))

    async def ask(self, prompt: str) -> Reply:
        await self.ready
        if not self.alive:
            raise ProviderError("claude: observer client closed", retryable=True)
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        await self.inbox.put((prompt, future))
        try:
            # The actor enforces the timeout itself; this outer bound only guards a wedged child.
            return await asyncio.wait_for(asyncio.shield(future), self.timeout + CLOSE_TIMEOUT)
        except TimeoutError:
            await self.stop()
            raise ProviderError(f"claude: no reply within {self.timeout:g} s", retryable=True) from None

    async def stop(self) -> None:
        if self.task.done():
            return
        await self.inbox.put(None)
        try:
            await asyncio.wait_for(asyncio.shield(self.task), CLOSE_TIMEOUT)
        except (TimeoutError, Exception):  # noqa: BLE001 - closing must not raise
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self.task, CLOSE_TIMEOUT)


class ClaudeObserverSession:
    """One observer conversation; its CLI child comes and goes with the provider's pool."""

    def __init__(self, provider: ClaudeProvider, info: SessionInfo) -> None:
        self.provider = provider
        self.info = info
        self.base_prompt = system_prompt_for(info)
        self.titles = BoundedHistory(0)  # only its recap is used: titles recorded so far
        self.actor: ClientActor | None = None
        self.busy = False
        self.last_used = time.monotonic()
        self.session_ids: list[str] = []  # one per CLI child this session has had
        self.closed = False

    @property
    def session_id(self) -> str:
        return self.session_ids[-1] if self.session_ids else ""

    def system_prompt(self) -> str:
        return self.titles.system_text(self.base_prompt)

    async def send(self, request: ObserverRequest) -> Reply:
        prompt_text = request.text
        if self.closed:
            raise ProviderError("claude: observer session is closed", retryable=True)
        async with self.provider.slot(self):
            actor = self.actor
            assert actor is not None
            try:
                reply = await actor.ask(prompt_text)
            finally:
                if actor.session_id and actor.session_id not in self.session_ids:
                    self.session_ids.append(actor.session_id)
                if not actor.alive:
                    self.actor = None
        self.titles.add(prompt_text, reply.text)
        return reply

    async def release(self) -> None:
        """Close this session's CLI child; the session itself stays usable."""
        actor, self.actor = self.actor, None
        if actor is not None:
            await actor.stop()

    async def close(self) -> None:
        self.closed = True
        await self.provider.forget(self)


class ClaudeProvider:
    name = "claude"
    takes_system_prompt = True

    def __init__(self, settings: Mapping[str, Any], *, env: Mapping[str, str] | None = None,
                 idle_seconds: float = 600.0) -> None:
        self.model = str(settings.get("claude_model") or "claude-haiku-4-5")
        self.cli_path = str(settings.get("cli_path") or "")
        self.max_observers = max(1, int(settings.get("max_observers") or 1))
        self.timeout = float(settings.get("observer_timeout_seconds") or 120)
        self.workdir = os.path.join(str(settings.get("data_dir") or os.path.expanduser("~/.claude-mem-py")), "observer")
        self.extra_env = dict(env or {})
        self.idle_seconds = idle_seconds
        self.sessions: list[ClaudeObserverSession] = []
        self.changed = asyncio.Condition()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        # Every actor task until it has finished, including ones still closing their CLI child
        # after a failed turn: aclose() waits for them so no child outlives the provider.
        self.tasks: set[asyncio.Task[None]] = set()

    def options(self, session: ClaudeObserverSession) -> ClaudeAgentOptions:
        os.makedirs(self.workdir, exist_ok=True)
        return ClaudeAgentOptions(
            tools=[],
            setting_sources=[],
            system_prompt=session.system_prompt(),
            model=self.model,
            cli_path=self.cli_path or None,
            cwd=self.workdir,
            env=child_env(self.extra_env),
            extra_args={"no-session-persistence": None},
            stderr=self.stderr_tail.append,
        )

    def live(self) -> list[ClaudeObserverSession]:
        return [s for s in self.sessions if s.actor is not None]

    @contextlib.asynccontextmanager
    async def slot(self, session: ClaudeObserverSession) -> AsyncIterator[None]:
        """Hold a live CLI child for `session` for one turn, evicting the LRU idle child if needed."""
        async with self.changed:
            await self._close_idle()
            while session.actor is None and len(self.live()) >= self.max_observers:
                idle = [s for s in self.live() if not s.busy]
                if idle:
                    await min(idle, key=lambda s: s.last_used).release()
                else:
                    await self.changed.wait()
            if session not in self.sessions:
                self.sessions.append(session)
            session.busy = True
            if session.actor is None:
                session.actor = ClientActor(self.options(session), self.timeout)
                self.tasks.add(session.actor.task)
                session.actor.task.add_done_callback(self.tasks.discard)
        try:
            yield
        finally:
            async with self.changed:
                session.busy = False
                session.last_used = time.monotonic()
                self.changed.notify_all()

    async def _close_idle(self) -> None:
        now = time.monotonic()
        for session in self.live():
            if not session.busy and now - session.last_used > self.idle_seconds:
                await session.release()

    async def forget(self, session: ClaudeObserverSession) -> None:
        await session.release()
        async with self.changed:
            if session in self.sessions:
                self.sessions.remove(session)
            self.changed.notify_all()

    async def open(self, session_info: SessionInfo) -> ClaudeObserverSession:
        if resolve_cli(self.cli_path) is None:
            raise AuthError(f"claude: Claude Code CLI not found{' at ' + self.cli_path if self.cli_path else ''}")
        return ClaudeObserverSession(self, session_info)

    async def health(self) -> Health:
        cli = resolve_cli(self.cli_path)
        if cli is None:
            where = f"at {self.cli_path}" if self.cli_path else "(not bundled with claude-agent-sdk, not on PATH)"
            return Health(False, f"Claude Code CLI not found {where}")
        ok, reason = await asyncio.to_thread(auth_status, cli, self.extra_env)
        return Health(ok, f"{reason}; model {self.model}" if ok else reason)

    async def aclose(self) -> None:
        for session in list(self.sessions):
            await session.close()
        if self.tasks:
            # Actors of failed turns close their child on their own; let them finish the SDK's
            # terminate/kill escalation instead of being cancelled half-way when the loop stops.
            await asyncio.wait(set(self.tasks), timeout=CLOSE_TIMEOUT + 5)
