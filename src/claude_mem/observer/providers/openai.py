"""`openai` observer: any OpenAI-compatible chat-completions server (Ollama, LM Studio, vLLM,
OpenRouter, OpenAI itself) through the official `openai` package.

Stateless like `anthropic`: a bounded history per session, the SDK's retries off, every call
bounded by `observer_timeout_seconds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam

from ..prompts import system_prompt_for
from ..provider import Health, ObserverRequest, ProviderError, Reply, SessionInfo
from .errors import bounded_call, from_sdk_exception
from .history import BoundedHistory

MAX_REPLY_TOKENS = 4096
# Local servers accept any key; the SDK refuses to start without one.
NO_KEY = "not-needed"


def _message(entry: Mapping[str, str]) -> ChatCompletionMessageParam:
    """A message of the bounded history as the Chat Completions API takes it."""
    if entry["role"] == "assistant":
        return {"role": "assistant", "content": entry["content"]}
    return {"role": "user", "content": entry["content"]}


def translate(exc: Exception) -> ProviderError:
    """An `openai` exception as a provider error."""
    return from_sdk_exception(exc, openai, "openai")


class OpenAISession:
    def __init__(self, provider: OpenAIProvider, info: SessionInfo) -> None:
        self.provider = provider
        self.system_prompt = system_prompt_for(info)
        self.history = BoundedHistory(provider.history_turns)

    async def send(self, request: ObserverRequest) -> Reply:
        prompt_text = request.text
        provider = self.provider
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": self.history.system_text(self.system_prompt)}]
        messages += [_message(entry) for entry in self.history.messages(prompt_text)]
        text, input_tokens, output_tokens = await bounded_call(
            provider.call(messages), provider.timeout, "openai", translate
        )
        if not text.strip():
            raise ProviderError("openai: empty reply", retryable=True)
        self.history.add(prompt_text, text)
        return Reply(text, input_tokens, output_tokens)

    async def close(self) -> None:
        self.history.turns.clear()


class OpenAIProvider:
    name = "openai"
    takes_system_prompt = True

    def __init__(self, settings: Mapping[str, Any], *, stream: bool = True) -> None:
        self.model = str(settings.get("openai_model") or "llama3.1")
        self.base_url = str(settings.get("openai_base_url") or "http://127.0.0.1:11434/v1")
        self.timeout = float(settings.get("observer_timeout_seconds") or 120)
        self.history_turns = int(settings.get("observer_history_turns") or 0)
        self.stream = stream
        self.has_key = bool(settings.get("openai_api_key"))
        self.client = openai.AsyncOpenAI(
            api_key=str(settings.get("openai_api_key") or NO_KEY),
            base_url=self.base_url,
            max_retries=0,
            timeout=self.timeout,
        )

    async def call(self, messages: list[ChatCompletionMessageParam]) -> tuple[str, int, int]:
        """One completion: (text, input tokens, output tokens)."""
        if not self.stream:
            completion = await self.client.chat.completions.create(model=self.model, messages=messages,
                                                                   max_tokens=MAX_REPLY_TOKENS)
            if not completion.choices:
                raise ProviderError("openai: reply without choices", retryable=True)
            usage = completion.usage
            return (
                completion.choices[0].message.content or "",
                usage.prompt_tokens if usage else 0,
                usage.completion_tokens if usage else 0,
            )
        parts: list[str] = []
        input_tokens = output_tokens = 0
        finished = False
        stream = await self.client.chat.completions.create(
            model=self.model, messages=messages, max_tokens=MAX_REPLY_TOKENS, stream=True,
            stream_options={"include_usage": True},
        )
        async with stream:
            async for chunk in stream:
                for choice in chunk.choices:
                    if choice.delta and choice.delta.content:
                        parts.append(choice.delta.content)
                    if choice.finish_reason:
                        finished = True
                if chunk.usage:
                    input_tokens, output_tokens = chunk.usage.prompt_tokens, chunk.usage.completion_tokens
        if not finished:
            # The server closed the stream before saying the reply was complete.
            raise ProviderError("openai: stream ended before the reply finished", retryable=True)
        return "".join(parts), input_tokens, output_tokens

    async def open(self, session_info: SessionInfo) -> OpenAISession:
        return OpenAISession(self, session_info)

    async def health(self) -> Health:
        key = "with key" if self.has_key else "no key"
        return Health(True, f"model {self.model} at {self.base_url} ({key})")

    async def aclose(self) -> None:
        await self.client.close()
