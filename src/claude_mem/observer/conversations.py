"""Observer conversations: one per Claude Code session, opened lazily, at most `limit` at once.

A conversation opens with an `init` section (project, the user's request, the date) or — when the
session already has stored observations, i.e. after a restart or after it was closed for being
idle — with a `recap` of them. The least recently used conversation is closed to make room, and a
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
    opening: str  # sent with the first batch, then cleared
    turns: int = 0


class Conversations:
    def __init__(self, provider: Provider, limit: int) -> None:
        self.provider = provider
        self.limit = max(1, limit)
        self.open: OrderedDict[str, Conversation] = OrderedDict()

    async def get(self, info: SessionInfo) -> Conversation:
        """The open conversation for `info.content_session_id`, opening it (and closing the LRU) if needed."""
        key = info.content_session_id
        if key in self.open:
            self.open.move_to_end(key)
            return self.open[key]
        while len(self.open) >= self.limit:
            oldest = next(iter(self.open))
            await self.close(oldest)
        date = time.strftime("%Y-%m-%d", time.gmtime())
        opening = prompts.recap_section(info, date) if info.recap else prompts.init_section(info, date)
        info = SessionInfo(**{**info.__dict__, "system_prompt": info.system_prompt or prompts.system_prompt()})
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
