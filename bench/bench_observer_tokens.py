"""Observer input tokens per tool event: batched turns versus one event per call.

The conversation is opened and each turn's request built as the pipeline does it (`Conversations`,
`prompts.turn_request`), and measured two ways, both with the same deterministic estimate
(characters / 4, `tests.fakes.replies.estimate_tokens`):

- `conversation`: what the observer conversation is sent — its system prompt once, plus every user
  turn. This is what a stateful provider (`claude`, one CLI child per conversation) sends.
- `anthropic_wire`: the real `anthropic` provider against the loopback fake Messages API; a
  stateless API is re-sent the system prompt and the recent history (bounded) on every call.

Two sessions: the recorded `session-edit` one (4 tool events) and a synthetic 200-event one. The
baseline is one event per call, measured in the same run; `ratio` < 1 means batching is cheaper.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.replies import estimate_tokens  # noqa: E402

from claude_mem import settings as settings_module  # noqa: E402
from claude_mem.observer.conversations import Conversations  # noqa: E402
from claude_mem.observer.prompts import system_prompt_for, turn_request  # noqa: E402
from claude_mem.observer.provider import Health, ObserverRequest, Provider, Reply, SessionInfo  # noqa: E402
from claude_mem.observer.providers.anthropic import AnthropicProvider  # noqa: E402
from claude_mem.store.models import PendingEvent  # noqa: E402

ROOT = "/home/dev/proj"
INFO = SessionInfo("bench", ROOT, user_request="edit hello.txt")


def session_edit() -> list[PendingEvent]:
    folder = os.path.join(REPO, "tests", "fixtures", "hook-payloads", "session-edit")
    events = []
    for n, name in enumerate(sorted(os.listdir(folder)), 1):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            payload = json.load(handle)
        if payload.get("hook_event_name") == "PostToolUse":
            events.append(PendingEvent(n, 1, "tool", 1, payload))
    return events


def synthetic(count: int) -> list[PendingEvent]:
    events = []
    for n in range(count):
        path = f"{ROOT}/src/pkg_{n % 17}/module_{n % 41}.py"
        if n % 3 == 0:
            payload = {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": f"value = {n}",
                                                             "new_string": f"value = {n + 1}  # adjusted"}, "tool_response": {}}
        elif n % 3 == 1:
            payload = {"tool_name": "Bash", "tool_input": {"command": f"pytest -q tests/test_module_{n % 41}.py"},
                       "tool_response": {"stdout": f"{n % 9 + 1} passed in 0.{n % 10}s", "stderr": ""}}
        else:
            payload = {"tool_name": "Read", "tool_input": {"file_path": path},
                       "tool_response": {"file": {"content": "def handler(event):\n    return event\n" * 3}}}
        events.append(PendingEvent(n + 1, 1, "tool", 1, payload))
    return events


class Recording:
    """A stateful provider that counts what its conversations are sent: the system prompt once, then
    every user turn (the `claude` provider's wire, without a model)."""

    name = "recording"
    takes_system_prompt = True

    def __init__(self) -> None:
        self.input_tokens = 0

    async def open(self, session_info: SessionInfo) -> Recording:
        self.input_tokens += estimate_tokens(system_prompt_for(session_info))
        return self

    async def send(self, request: ObserverRequest) -> Reply:
        tokens = estimate_tokens(request.text)
        self.input_tokens += tokens
        return Reply("<skip/>", tokens, 1)

    async def close(self) -> None:
        return None

    async def health(self) -> Health:
        return Health(ok=True)

    async def aclose(self) -> None:
        return None


async def converse(provider: Provider, events: Sequence[PendingEvent], per_call: int) -> dict[str, float]:
    """Sends `events`, `per_call` at a time, in one conversation opened as the pipeline opens it."""
    conversations = Conversations(provider, 1)
    conversation = await conversations.get(INFO)
    total_in = total_out = calls = 0
    for start in range(0, len(events), per_call):
        request = turn_request(events[start:start + per_call], root=ROOT, opening=conversation.opening)
        conversation.opening = ""
        reply = await conversation.session.send(request)
        total_in += reply.input_tokens
        total_out += reply.output_tokens
        calls += 1
    await conversations.close_all()
    await provider.aclose()
    if isinstance(provider, Recording):
        total_in = provider.input_tokens  # the system prompt included
    return {"calls": calls, "input_tokens": total_in, "output_tokens": total_out,
            "input_tokens_per_event": round(total_in / len(events), 1)}


def compare(measure: Callable[[Sequence[PendingEvent], int], dict[str, float]], events: Sequence[PendingEvent],
            batch: int) -> dict[str, object]:
    one, batched = measure(events, 1), measure(events, batch)
    return {"one_event_per_call": one, "batched": batched,
            "ratio": round(batched["input_tokens_per_event"] / one["input_tokens_per_event"], 3)}


def main(argv: list[str]) -> dict[str, object]:
    batch = int(settings_module.DEFAULTS["batch_max_events"])
    report: dict[str, object] = {
        "method": "tokens = chars / 4; conversation: system prompt once + every user turn; "
                  "anthropic_wire: every request to the fake Messages API",
        "batch_max_events": batch,
    }

    def conversation(events: Sequence[PendingEvent], per_call: int) -> dict[str, float]:
        return asyncio.run(converse(Recording(), events, per_call))

    with FakeAnthropic() as fake:
        values = dict(settings_module.DEFAULTS, anthropic_api_key="sk-bench", anthropic_base_url=fake.url,
                      observer_timeout_seconds=30)

        def anthropic_wire(events: Sequence[PendingEvent], per_call: int) -> dict[str, float]:
            return asyncio.run(converse(AnthropicProvider(values), events, per_call))

        for name, events in (("session-edit", session_edit()), ("synthetic-200", synthetic(200))):
            report[name] = {"events": len(events), "conversation": compare(conversation, events, batch),
                            "anthropic_wire": compare(anthropic_wire, events, batch)}
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
