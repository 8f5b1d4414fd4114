"""Observer conversations: one per Claude Code session, opened lazily, at most `limit` at once.

A conversation opens with the observer's system prompt (`prompts.system_prompt`: the standing
instructions and the session's context — project, date, the user's request, and a recap of what is
stored when the session already has observations, i.e. after a restart or after it was closed for
being idle). A provider that takes a system prompt gets it that way; for any other, the first turn
opens with the same text. The least recently used conversation is closed to make room, and a
session never has two open at once.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

from claude_mem.observer import prompts
from claude_mem.observer.provider import ObserverSession, Provider, SessionInfo

log = logging.getLogger("claude_mem.observer")


@dataclass
class Conversation:
    session: ObserverSession
    info: SessionInfo
    opening: str  # the first turn's opening (for providers without a system prompt), then cleared
    turns: int = 0


class Conversations:
    def __init__(self, provider: Provider, limit: int) -> None:
        self.provider = provider
        self.limit = max(1, limit)
        self.open: OrderedDict[str, Conversation] = OrderedDict()

    async def get(self, info: SessionInfo, date: str = "") -> Conversation:
        """The open conversation for `info.content_session_id`, opening it (and closing the LRU) if needed;
        `date` is the day the events it opens with happened (default today, UTC)."""
        key = info.content_session_id
        if key in self.open:
            self.open.move_to_end(key)
            return self.open[key]
        while len(self.open) >= self.limit:
            oldest = next(iter(self.open))
            await self.close(oldest)
        date = date or time.strftime("%Y-%m-%d", time.gmtime())
        info = prompts.with_system_prompt(info, date)
        opening = "" if self.provider.takes_system_prompt else info.system_prompt
        session = await self.provider.open(info)
        conversation = Conversation(session=session, info=info, opening=opening)
        self.open[key] = conversation
        return conversation

    async def close(self, content_session_id: str) -> None:
        conversation = self.open.pop(content_session_id, None)
        if conversation is None:
            return
        try:
            await conversation.session.close()
        except Exception:
            log.exception("closing the observer conversation of %s failed", content_session_id)

    async def close_all(self) -> None:
        for key in list(self.open):
            await self.close(key)
