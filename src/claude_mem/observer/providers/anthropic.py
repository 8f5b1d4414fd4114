"""`anthropic` observer: the Messages API through the official `anthropic` package (2.x).

Stateless over HTTP, so each session keeps a bounded history (see `history.py`). Retries belong to
the pipeline's queue, so the SDK's own are off (`max_retries=0`); every call is bounded by
`observer_timeout_seconds` twice over (the HTTP client's timeout and an asyncio deadline).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import anthropic
from anthropic.types import Message, MessageParam

from ..prompts import system_prompt_for
from ..provider import AuthError, Health, ObserverRequest, ProviderError, Reply, SessionInfo
from .errors import bounded_call, from_sdk_exception
from .history import BoundedHistory

MAX_REPLY_TOKENS = 4096


def _api_key(settings: Mapping[str, object]) -> tuple[str, str]:
    """The key and where it came from: the setting first, then `ANTHROPIC_API_KEY`."""
    if settings.get("anthropic_api_key"):
        return str(settings["anthropic_api_key"]), "anthropic_api_key"
    return os.environ.get("ANTHROPIC_API_KEY", ""), "ANTHROPIC_API_KEY"


def _auth_token() -> str:
    return os.environ.get("ANTHROPIC_AUTH_TOKEN", "")


def _message(entry: Mapping[str, str]) -> MessageParam:
    """A message of the bounded history as the Messages API takes it."""
    if entry["role"] == "assistant":
        return {"role": "assistant", "content": entry["content"]}
    return {"role": "user", "content": entry["content"]}


def translate(exc: Exception) -> ProviderError:
    """An `anthropic` exception as a provider error."""
    return from_sdk_exception(exc, anthropic, "anthropic")


class AnthropicSession:
    def __init__(self, provider: AnthropicProvider, info: SessionInfo) -> None:
        self.provider = provider
        self.info = info
        self.system_prompt = system_prompt_for(info)
        self.history = BoundedHistory(provider.history_turns)

    async def send(self, request: ObserverRequest) -> Reply:
        prompt_text = request.text
        provider = self.provider
        system = self.history.system_text(self.system_prompt)
        messages = [_message(entry) for entry in self.history.messages(prompt_text)]
        message = await bounded_call(provider.call(system, messages), provider.timeout, "anthropic", translate)
        if message.stop_reason is None:
            # A stream that closed before `message_delta`/`message_stop`: the text may be cut anywhere.
            raise ProviderError("anthropic: stream ended before the reply finished", retryable=True)
        text = "".join(block.text for block in message.content if isinstance(block, anthropic.types.TextBlock))
        if not text.strip():
            raise ProviderError("anthropic: empty reply", retryable=True)
        usage = message.usage
        input_tokens = (
            (usage.input_tokens or 0)
            + (getattr(usage, "cache_read_input_tokens", 0) or 0)
            + (getattr(usage, "cache_creation_input_tokens", 0) or 0)
        )
        self.history.add(prompt_text, text)
        return Reply(text, input_tokens, usage.output_tokens or 0)

    async def close(self) -> None:
        self.history.turns.clear()


class AnthropicProvider:
    name = "anthropic"
    takes_system_prompt = True

    def __init__(self, settings: Mapping[str, Any], *, stream: bool = True) -> None:
        self.model = str(settings.get("anthropic_model") or "claude-haiku-4-5")
        self.timeout = float(settings.get("observer_timeout_seconds") or 120)
        self.history_turns = int(settings.get("observer_history_turns") or 0)
        self.stream = stream
        self.key, self.key_source = _api_key(settings)
        self.token = "" if self.key else _auth_token()
        base_url = str(settings.get("anthropic_base_url") or "") or None
        self.client: anthropic.AsyncAnthropic | None = None
        if self.key or self.token:
            self.client = anthropic.AsyncAnthropic(
                api_key=self.key or None,
                auth_token=self.token or None,
                base_url=base_url,
                max_retries=0,
                timeout=self.timeout,
            )

    async def call(self, system: str, messages: list[MessageParam]) -> Message:
        if self.client is None:
            raise AuthError("anthropic: no API key (set anthropic_api_key or ANTHROPIC_API_KEY)")
        if not self.stream:
            return await self.client.messages.create(model=self.model, max_tokens=MAX_REPLY_TOKENS, system=system,
                                                     messages=messages)
        async with self.client.messages.stream(model=self.model, max_tokens=MAX_REPLY_TOKENS, system=system,
                                               messages=messages) as stream:
            return await stream.get_final_message()

    async def open(self, session_info: SessionInfo) -> AnthropicSession:
        if self.client is None:
            raise AuthError("anthropic: no API key (set anthropic_api_key or ANTHROPIC_API_KEY)")
        return AnthropicSession(self, session_info)

    async def health(self) -> Health:
        if self.client is None:
            return Health(False, "no API key: set anthropic_api_key or ANTHROPIC_API_KEY")
        source = self.key_source if self.key else "ANTHROPIC_AUTH_TOKEN"
        return Health(True, f"model {self.model}, key from {source}, base URL {self.client.base_url}")

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.close()
