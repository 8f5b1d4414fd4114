"""The `fake` observer provider: scripted replies, delays and failures.

It is not part of the package: the test suite registers it like any plugin, as the entry point
`fake` of `claude_mem.providers` in `tests/plugins/` (conftest puts that folder and `tests/` on the
path of the tests and of every process they start), so `provider = fake` works in a real worker too.

A script is a dict (from the `fake_script` key of the settings mapping, or the JSON file or text in
`CLAUDE_MEM_FAKE_SCRIPT` for subprocess tests):

    {"steps": [{"text": "..."}, {"error": "rate", "retry_after": 0}, {"delay": 0.5}, ...],
     "default": "reword" | "malformed" | "skip",   # once the steps run out
     "delay": 0.0,                                 # before every reply
     "health": {"ok": true, "reason": ""},
     "poison": "text",                             # any prompt containing it fails (retryable)
     "system_prompt": false,                       # true: instructions go in the system prompt
     "log": "/path/calls.jsonl"}                   # one line per call, for tests across processes

`reword` (the default) answers from the events of the request — one observation naming their files
and commands, and a summary when asked — and words every answer differently (a per-instance nonce
and a counter), so a redone batch never repeats the text of an earlier attempt. Like every provider
without a system prompt, it is sent the standing instructions in the first turn of a conversation.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Mapping
from typing import Any

from claude_mem.observer.contract import reply_xml
from claude_mem.observer.parser import ParsedObservation, ParsedSummary
from claude_mem.observer.provider import (
    PROMPT_HEADER,
    AuthError,
    Health,
    ObserverRequest,
    ProviderError,
    QuotaExhausted,
    RateLimited,
    Reply,
    SessionInfo,
)

ENV_SCRIPT = "CLAUDE_MEM_FAKE_SCRIPT"
WORDINGS = ("Recorded", "Noted", "Observed", "Logged", "Captured", "Saw")
MALFORMED = (
    "I looked at the events but I am not sure what to say.",
    "<observation><type>change</type><title></title><narrative>no title</narrative></observation>",
    "<observation><type>bugfix</type><title>No narrative here</title></observation>",
    "```xml\n<summary></summary>\n```",
    "<obsrvation>typo</obsrvation>",
)


def load_script(settings: Mapping[str, object]) -> dict[str, Any]:
    script = settings.get("fake_script")
    if isinstance(script, dict):
        return script
    raw = os.environ.get(ENV_SCRIPT, "")
    if not raw:
        return {}
    if not raw.lstrip().startswith("{"):
        with open(raw, encoding="utf-8") as handle:
            raw = handle.read()
    loaded = json.loads(raw)
    return loaded if isinstance(loaded, dict) else {}


def _raise(step: Mapping[str, Any]) -> None:
    kind, message = step.get("error"), str(step.get("message") or f"fake {step.get('error')} error")
    if kind == "auth":
        raise AuthError(message)
    if kind == "rate":
        raise RateLimited(message, retry_after=step.get("retry_after"))
    if kind == "quota":
        raise QuotaExhausted(message)
    if kind == "fatal":
        raise ProviderError(message, retryable=False)
    raise ProviderError(message)


class FakeSession:
    def __init__(self, provider: FakeProvider, info: SessionInfo) -> None:
        self.provider = provider
        self.info = info
        self.closed = False

    async def send(self, request: ObserverRequest) -> Reply:
        if self.closed:
            raise ProviderError("fake session used after close")
        return await self.provider.answer(self.info, request)

    async def close(self) -> None:
        self.closed = True
        self.provider.open_sessions.discard(self.info.content_session_id)


class FakeProvider:
    name = "fake"

    def __init__(self, settings: Mapping[str, object] | None = None, script: dict[str, Any] | None = None) -> None:
        self.script = script if script is not None else load_script(settings or {})
        self.steps: list[dict[str, Any]] = list(self.script.get("steps", []))
        self.takes_system_prompt = bool(self.script.get("system_prompt", False))
        self.nonce = secrets.token_hex(3)
        self.calls: list[tuple[str, str]] = []  # (content_session_id, prompt text)
        self.requests: list[ObserverRequest] = []
        self.opened: list[SessionInfo] = []
        self.open_sessions: set[str] = set()
        self.max_open = 0

    async def open(self, session_info: SessionInfo) -> FakeSession:
        if session_info.content_session_id in self.open_sessions:
            raise ProviderError(f"two observer sessions open for {session_info.content_session_id}")
        self.opened.append(session_info)
        self.open_sessions.add(session_info.content_session_id)
        self.max_open = max(self.max_open, len(self.open_sessions))
        return FakeSession(self, session_info)

    async def health(self) -> Health:
        health = self.script.get("health") or {}
        return Health(ok=bool(health.get("ok", True)), reason=str(health.get("reason", "fake provider")))

    async def aclose(self) -> None:
        self.open_sessions.clear()

    def _log(self, info: SessionInfo, request: ObserverRequest, outcome: str) -> None:
        path = self.script.get("log")
        if path:
            with open(str(path), "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"pid": os.getpid(), "session": info.content_session_id,
                                         "events": [e.id for e in request.events], "outcome": outcome}) + "\n")

    async def answer(self, info: SessionInfo, request: ObserverRequest) -> Reply:
        prompt = request.text
        if not prompt.startswith(PROMPT_HEADER):
            raise ProviderError("not an observer prompt", retryable=False)
        self.calls.append((info.content_session_id, prompt))
        self.requests.append(request)
        step = self.steps.pop(0) if self.steps else {}
        delay = float(step.get("delay", self.script.get("delay", 0.0)))
        self._log(info, request, "start")
        if delay:
            await asyncio.sleep(delay)
        if "error" in step:
            self._log(info, request, "error")
            _raise(step)
        poison = self.script.get("poison")
        if poison and str(poison) in prompt:
            self._log(info, request, "error")
            raise ProviderError(f"fake: a poisonous event ({poison}) in the batch", retryable=True)
        if "text" in step:
            text = str(step["text"])
        else:
            mode = str(self.script.get("default", "reword"))
            if mode == "malformed":
                text = MALFORMED[len(self.calls) % len(MALFORMED)]
            elif mode == "skip":
                text = "<skip/>" if request.turn_end is None else self._reword(request)
            else:
                text = self._reword(request)
        self._log(info, request, "reply")
        return Reply(text=text, input_tokens=len(prompt) // 4, output_tokens=len(text) // 4)

    def _reword(self, request: ObserverRequest) -> str:
        """A valid reply built from the request's events, worded differently on every call."""
        events = [] if request.summary_only else list(request.events)
        wording = f"{WORDINGS[len(self.calls) % len(WORDINGS)]} (take {len(self.calls)}, {self.nonce})"
        observations = []
        if events:
            files = sorted({e.file for e in events if e.file})
            commands = [e.command for e in events if e.tool == "Bash"]
            subject = ", ".join(files + [f"`{c}`" for c in commands][:3]) or f"{len(events)} events"
            observations.append(ParsedObservation(
                type="change", title=f"{wording}: {subject}",
                narrative=f"The fake observer saw {len(events)} events (ids {', '.join(str(e.id) for e in events)}).",
                facts=tuple(f"event {e.id}: {e.kind} {e.tool}".strip() for e in events[:10]),
                files_modified=tuple(files),
            ))
        turn_end = request.turn_end
        summary = None
        if turn_end is not None:
            summary = ParsedSummary(request=turn_end.request or "(not captured)",
                                    completed=f"{wording} the end of the turn",
                                    notes=turn_end.last_assistant_message)
        return reply_xml(observations, summary)
