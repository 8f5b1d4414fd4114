"""What the observer would be sent for imported events: an estimate for `--dry-run`.

The events are rendered exactly as the worker renders them (`observer.prompts.turn_prompt`), one
request per user turn, after the session's system prompt, and counted with the context's token
unit (characters / 4). That is what a conversation-keeping provider (`claude`) is sent; a stateless
API provider is re-sent some history with every request and costs more.
"""

from __future__ import annotations

from typing import Any

from claude_mem.observer.prompts import system_prompt, turn_prompt
from claude_mem.observer.provider import SessionInfo, TurnEnd
from claude_mem.recall.sanitize import estimate_tokens
from claude_mem.store.models import PendingEvent

DATE = "2026-01-01"  # a fixed date: the system prompt's length must not depend on today's


def observer_tokens(content_session_id: str, project: str, events: list[tuple[str, int | None, dict[str, Any]]]) -> int:
    """Input tokens for one session's `(kind, prompt_number, payload)` events, oldest first."""
    if not events:
        return 0
    request = next((str(p.get("prompt") or "") for kind, _, p in events if kind == "prompt"), "")
    total = estimate_tokens(system_prompt(SessionInfo(content_session_id, project, user_request=request), DATE))
    turns: dict[int | None, list[PendingEvent]] = {}
    ends: dict[int | None, TurnEnd] = {}
    requests: dict[int | None, str] = {}
    for index, (kind, number, payload) in enumerate(events, 1):
        if kind == "prompt":
            requests[number] = str(payload.get("prompt") or "")
        if kind == "summarize":
            ends[number] = TurnEnd(requests.get(number, ""), str(payload.get("last_assistant_message") or ""))
        turns.setdefault(number, []).append(PendingEvent(index, 0, kind, number, payload))
    for number, pending in turns.items():
        total += estimate_tokens(turn_prompt(pending, root=project, turn_end=ends.get(number)))
    return total
