"""Bounded conversation history for stateless observer backends.

An HTTP API forgets everything between calls, so the provider resends the conversation. Resending
all of it would make every turn cost more than the last; instead the session keeps the most recent
`observer_history_turns` exchanges verbatim and folds older ones into a running recap — the titles
of what the observer already recorded — capped in characters. Request size is then bounded by
`system + recap cap + turns × (batch cap + reply cap)`, whatever the session's length.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

RECAP_MAX_CHARS = 4000
REPLY_MAX_CHARS = 8000

_TITLE = re.compile(r"<title>\s*(.*?)\s*</title>", re.DOTALL)
_REQUEST = re.compile(r"<request>\s*(.*?)\s*</request>", re.DOTALL)


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: str


def recap_lines(reply: str) -> list[str]:
    """One line per observation title (and summary request) found in an observer reply."""
    lines = [f"- {' '.join(title.split())}" for title in _TITLE.findall(reply) if title.strip()]
    lines += [f"- (turn summary) {' '.join(req.split())}" for req in _REQUEST.findall(reply) if req.strip()]
    return lines


class BoundedHistory:
    """Recent turns verbatim plus a capped recap of everything older."""

    def __init__(self, max_turns: int, recap: str = "", recap_max_chars: int = RECAP_MAX_CHARS) -> None:
        self.max_turns = max(0, max_turns)
        self.recap_max_chars = recap_max_chars
        self.turns: deque[Turn] = deque()
        self._recap: list[str] = [line for line in recap.splitlines() if line.strip()]
        self._trim_recap()

    @property
    def recap(self) -> str:
        return "\n".join(self._recap)

    def add(self, user: str, assistant: str) -> None:
        """Record one finished exchange; the oldest ones beyond `max_turns` go to the recap."""
        self.turns.append(Turn(user, assistant[:REPLY_MAX_CHARS]))
        while len(self.turns) > self.max_turns:
            old = self.turns.popleft()
            self._recap.extend(recap_lines(old.assistant))
        self._trim_recap()

    def _trim_recap(self) -> None:
        # Oldest recap lines give way first; the recap never grows past its cap.
        while self._recap and len(self.recap) > self.recap_max_chars:
            self._recap.pop(0)

    def system_text(self, system_prompt: str) -> str:
        """The system prompt with the recap appended when there is one."""
        if not self._recap:
            return system_prompt
        note = "\n\nAlready recorded earlier in this session (do not record again):\n"
        return system_prompt + note + self.recap

    def messages(self, prompt_text: str) -> list[dict[str, str]]:
        """Chat messages for the next call: recent turns, then the new prompt."""
        result: list[dict[str, str]] = []
        for turn in self.turns:
            result.append({"role": "user", "content": turn.user})
            result.append({"role": "assistant", "content": turn.assistant or "<skip/>"})
        result.append({"role": "user", "content": prompt_text})
        return result
